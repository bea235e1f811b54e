package memory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A scope's common words are those more than MaxTermBeliefs of its beliefs hold (any
// status: the words index holds them all). The words ranking counts a term's beliefs on
// the GIN index, which has no early stop: a word every belief of a scope of 10,000 holds
// costs its whole posting list, about a millisecond, to learn that it tells nothing apart.
// Kept beside the beliefs (migration 038), the scope's common words are left out of a
// text's terms before any is read.
//
// They are counted by the consolidation pass, not by each write: the count reads every
// belief of the scope (about 10 µs each), and a word becomes common as the scope grows,
// so it is counted again when the scope's beliefs grew or shrank by a fifth. Until then a
// word that became common costs its read, as before; one that stopped being common is
// left to the vectors. A purge, a curation or a redaction of the scope drops the row
// (forgetCommonWords): no purged word stays in it.

// CommonWordsResult is what CountCommonWords did.
type CommonWordsResult struct {
	// Counted says the scope's words were counted now; else its count was recent enough.
	Counted bool
	// Beliefs is the scope's beliefs, any status; Words how many words more than
	// MaxTermBeliefs of them hold, when counted.
	Beliefs int64
	Words   int
}

// CountCommonWords counts the words of scope that more than MaxTermBeliefs of its beliefs
// hold, when due: the scope holds more than MaxTermBeliefs beliefs and has no count, or
// its beliefs grew or shrank by a fifth since the last. Under the scope's lock, so that a
// purge's drop of the count is never overwritten by words counted before it; an erased
// scope gets no row.
func (s *Store) CountCommonWords(ctx context.Context, scope string) (CommonWordsResult, error) {
	var res CommonWordsResult
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		res = CommonWordsResult{}
		erased, err := ScopeErasedTx(ctx, tx, scope)
		if err != nil || erased {
			return err
		}
		var counted *int64
		err = tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM belief WHERE scope = $1),
			(SELECT beliefs FROM scope_common_words WHERE scope = $1)`, scope).Scan(&res.Beliefs, &counted)
		if err != nil {
			return err
		}
		if !commonWordsDue(res.Beliefs, counted) {
			return nil
		}
		var words []string
		err = tx.QueryRow(ctx, `SELECT coalesce(array_agg(c.lexeme ORDER BY c.lexeme), '{}') FROM (
			SELECT w.lexeme FROM belief b, unnest(b.words) w WHERE b.scope = $1
			GROUP BY w.lexeme HAVING count(*) > $2) c`, scope, MaxTermBeliefs).Scan(&words)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO scope_common_words (scope, words, beliefs, counted_at) VALUES ($1, $2, $3, now())
			ON CONFLICT (scope) DO UPDATE SET words = excluded.words, beliefs = excluded.beliefs, counted_at = excluded.counted_at`,
			scope, words, res.Beliefs)
		res.Counted, res.Words = err == nil, len(words)
		return err
	})
	if err != nil {
		return CommonWordsResult{}, fmt.Errorf("count the common words of %q: %w", scope, err)
	}
	return res, nil
}

// commonWordsDue says whether a scope of beliefs, counted before at counted (nil:
// never), is counted again: a scope of MaxTermBeliefs beliefs or fewer has no common
// word.
func commonWordsDue(beliefs int64, counted *int64) bool {
	if counted == nil {
		return beliefs > MaxTermBeliefs
	}
	return beliefs*5 >= *counted*6 || beliefs*5 <= *counted*4
}

// forgetCommonWords drops the scope's count of its common words, in the transaction of a
// write that removed or redacted some of its words: the next consolidation pass counts
// them again.
func forgetCommonWords(ctx context.Context, tx pgx.Tx, scope string) error {
	if _, err := tx.Exec(ctx, "DELETE FROM scope_common_words WHERE scope = $1", scope); err != nil {
		return fmt.Errorf("forget the common words of %q: %w", scope, err)
	}
	return nil
}
