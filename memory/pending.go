package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// Unembedded is a belief or revision event stored without a vector. A job that embeds
// its transcript before the LLM call stores what it learns without vectors, so that it
// makes one embedding call, not two; the next job of the scope (or consolidation)
// embeds them in its own call.
type Unembedded struct {
	Event bool // a revision event, else a belief
	ID    int64
	Text  string
	// parts are an event's texts when it was read: a backfill may rewrite them before
	// the vector is stored, and the vector of the old text must not be.
	parts [3]string
}

// EventText is the text embedded for a revision event, and so what a later transcript
// is compared with: the old belief, what was said, and the new belief.
func EventText(old, excerpt, new string) string {
	var b strings.Builder
	b.WriteString("Believed: " + old)
	if excerpt != "" {
		b.WriteString("\nSaid: " + excerpt)
	}
	if new != "" {
		b.WriteString("\nNow: " + new)
	}
	return b.String()
}

// Unembedded lists up to limit active beliefs and revision events of scope without a
// vector, oldest first.
func (s *Store) Unembedded(ctx context.Context, scope string, limit int) ([]Unembedded, error) {
	rows, err := s.db.Query(ctx, `(SELECT false, id, statement, '', '' FROM belief
			WHERE scope = $1 AND status = 'active' AND embedding IS NULL ORDER BY id LIMIT $2)
		UNION ALL
		(SELECT true, id, old_statement, coalesce(excerpt, ''), coalesce(new_statement, '') FROM revision_event
			WHERE scope = $1 AND embedding IS NULL AND action <> 'reinforce' ORDER BY id LIMIT $2)`, scope, limit)
	if err != nil {
		return nil, fmt.Errorf("unembedded of %q: %w", scope, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Unembedded, error) {
		var (
			u                    Unembedded
			text, excerpt, newer string
		)
		err := row.Scan(&u.Event, &u.ID, &text, &excerpt, &newer)
		u.Text = text
		if u.Event {
			u.Text, u.parts = EventText(text, excerpt, newer), [3]string{text, excerpt, newer}
		}
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("unembedded of %q: %w", scope, err)
	}
	return out, nil
}

// SetEmbeddings stores vecs[i] as the vector of items[i] in model, unless another
// writer did first, or an event's text changed since it was read. It never waits on a
// row a writer changes (waiting in another order than the writer's could deadlock):
// such a row keeps no vector, and is embedded next time. A row a writer only references
// (a new link to it) does not stop it: the lock it takes is NO KEY.
// Call EnsureEmbeddingModel before.
func (s *Store) SetEmbeddings(ctx context.Context, model string, items []Unembedded, vecs [][]float32) error {
	if len(items) != len(vecs) {
		return fmt.Errorf("set embeddings: %d items, %d vectors", len(items), len(vecs))
	}
	if len(items) == 0 {
		return nil
	}
	batch := &pgx.Batch{}
	for i, u := range items {
		// A belief that gains a vector is new to consolidation, which only sees embedded
		// beliefs: its updated_at moves so that the next pass takes it as a seed.
		sql := `UPDATE belief SET embedding = $2::vector, embed_model = $3, updated_at = $4
			WHERE id = (SELECT id FROM belief WHERE id = $1 AND embedding IS NULL FOR NO KEY UPDATE SKIP LOCKED)`
		args := []any{u.ID, pgvector.NewVector(vecs[i]), model, s.clock()}
		if u.Event {
			sql = `UPDATE revision_event SET embedding = $2::vector, embed_model = $3
				WHERE id = (SELECT id FROM revision_event WHERE id = $1 AND embedding IS NULL
					AND old_statement = $4 AND coalesce(excerpt, '') = $5 AND coalesce(new_statement, '') = $6
					FOR NO KEY UPDATE SKIP LOCKED)`
			args = []any{u.ID, pgvector.NewVector(vecs[i]), model, u.parts[0], u.parts[1], u.parts[2]}
		}
		batch.Queue(sql, args...)
	}
	if err := s.db.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("set embeddings: %w", err)
	}
	return nil
}
