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
	// Scope is the row's: SetEmbeddings writes and locks it on its scope's shard.
	Scope string
	Text  string
	// parts are an event's texts when it was read: a backfill may rewrite them before
	// the vector is stored, and the vector of the old text must not be.
	parts [3]string
}

// EventText is the text embedded for a revision event, and so what a later transcript
// is compared with: the old belief, what was said, and the new belief.
func EventText(old, excerpt, now string) string {
	var b strings.Builder
	b.WriteString("Believed: " + old)
	if excerpt != "" {
		b.WriteString("\nSaid: " + excerpt)
	}
	if now != "" {
		b.WriteString("\nNow: " + now)
	}
	return b.String()
}

// Unembedded lists up to limit beliefs and revision events of scope without a vector of
// model, oldest first: stored without one, or embedded with another model before
// EMBED_MODEL changed. Active beliefs come first, as current reads and candidates rank
// them; then the superseded and retracted ones history reads rank. Forgotten beliefs
// and restatements are never embedded.
func (s *Store) Unembedded(ctx context.Context, scope, model string, limit int) ([]Unembedded, error) {
	return s.unembedded(ctx, scopeUnembedded(scope, model, limit))
}

// scopeUnembedded is Unembedded's query.
func scopeUnembedded(scope, model string, limit int) unembeddedQuery {
	return unembeddedQuery{where: "scope = $1", args: []any{scope}, stale: notEmbeddedWith(2), model: model, limit: limit, ordered: true}
}

// Reembeddable lists up to limit beliefs and revision events of any scope embedded with
// another model than model, for the background re-embedding after a change of
// EMBED_MODEL. Rows stored without a vector are left to the scope's next extraction or
// read, which embeds them in the call it makes anyway. The (embed_model, scope) indexes
// find them, however large the tables.
func (s *Store) Reembeddable(ctx context.Context, model string, limit int) ([]Unembedded, error) {
	return s.unembedded(ctx, unembeddedQuery{where: "true", stale: embeddedWithAnother(1), model: model, limit: limit})
}

// notEmbeddedWith is "embed_model IS DISTINCT FROM $n" written as conditions a btree
// on embed_model answers.
func notEmbeddedWith(n int) string {
	return "(embed_model IS NULL OR " + embeddedWithAnother(n) + ")"
}

// embeddedWithAnother is "embed_model <> $n" written as two ranges of a btree on
// embed_model.
func embeddedWithAnother(n int) string {
	return fmt.Sprintf("(embed_model < $%d OR embed_model > $%d)", n, n)
}

// unembedded reads the rows of q.
func (s *Store) unembedded(ctx context.Context, q unembeddedQuery) ([]Unembedded, error) {
	var out []Unembedded
	if err := sendQueued(ctx, s.db, func(b *pgx.Batch) { queueUnembedded(b, q, &out) }); err != nil {
		return nil, err
	}
	return out, nil
}

// unembeddedQuery is the rows of where (args numbered from $1) that match stale (on
// the model, numbered next), oldest and active first when ordered; unordered, the rows
// come in the order of the (embed_model, scope) indexes, so that a batch never sorts
// every row left.
type unembeddedQuery struct {
	where   string
	args    []any
	stale   string
	model   string
	limit   int
	ordered bool
}

// queueUnembedded queues unembedded's read of q on b, into out once b is sent.
func queueUnembedded(b *pgx.Batch, q unembeddedQuery, out *[]Unembedded) {
	n := len(q.args)
	beliefOrder, eventOrder := "ORDER BY status <> 'active', id", "ORDER BY id"
	if !q.ordered {
		beliefOrder, eventOrder = "", ""
	}
	b.Queue(fmt.Sprintf(`(SELECT false, id, scope, statement, '', '' FROM belief
			WHERE %[1]s AND status <> 'forgotten' AND %[2]s %[4]s LIMIT $%[3]d)
		UNION ALL
		(SELECT true, id, scope, old_statement, coalesce(excerpt, ''), coalesce(new_statement, '') FROM revision_event
			WHERE %[1]s AND action <> 'reinforce' AND action <> 'revert' AND %[2]s %[5]s LIMIT $%[3]d)`, q.where, q.stale, n+2, beliefOrder, eventOrder),
		append(append([]any{}, q.args...), q.model, q.limit)...).Query(func(rows pgx.Rows) error {
		var err error
		*out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Unembedded, error) {
			var (
				u                    Unembedded
				text, excerpt, newer string
			)
			err := row.Scan(&u.Event, &u.ID, &u.Scope, &text, &excerpt, &newer)
			u.Text = text
			if u.Event {
				u.Text, u.parts = EventText(text, excerpt, newer), [3]string{text, excerpt, newer}
			}
			return u, err
		})
		if err != nil {
			return fmt.Errorf("unembedded rows: %w", err)
		}
		return nil
	})
}

// ReembedPending counts, per scope starting with prefix, the beliefs and revision
// events embedded with another model than model (see Reembeddable), and the dismissed
// review items without a vector of it (see DismissalScopes): what is left to re-embed
// after a change of EMBED_MODEL.
func (s *Store) ReembedPending(ctx context.Context, model, prefix string) (map[string]int, error) {
	stale := embeddedWithAnother(1)
	rows, err := s.db.Query(ctx, `SELECT scope, sum(n)::int FROM (
			SELECT scope, count(*) AS n FROM belief WHERE `+stale+` AND status <> 'forgotten' AND starts_with(scope, $2) GROUP BY scope
			UNION ALL
			SELECT scope, count(*) FROM revision_event WHERE `+stale+` AND action <> 'reinforce' AND action <> 'revert' AND starts_with(scope, $2) GROUP BY scope
			UNION ALL
			SELECT scope, count(*) FROM belief_conflict WHERE resolution = 'dismissed' AND `+notEmbeddedWith(1)+` AND starts_with(scope, $2) GROUP BY scope
		) c GROUP BY scope`, model, prefix)
	return countsByScope(rows, err, "rows to re-embed")
}

// SetEmbeddings stores vecs[i] as the vector of items[i] in model, in place of a vector
// of another model, unless another writer did first, or an event's text changed since
// it was read. It never waits on a row a writer changes (waiting in another order than
// the writer's could deadlock): such a row keeps what it has, and is embedded next time. A row a writer only references
// (a new link to it) does not stop it: the lock it takes is NO KEY.
// Each row is written, and locked, by its id and scope (Unembedded lists both): on
// Citus one shard's work, where a lock by id alone asks every shard and is refused.
// It returns how many rows it stored. Call EnsureEmbeddingModel before.
func (s *Store) SetEmbeddings(ctx context.Context, model string, items []Unembedded, vecs [][]float32) (int, error) {
	if len(items) != len(vecs) {
		return 0, fmt.Errorf("set embeddings: %d items, %d vectors", len(items), len(vecs))
	}
	if len(items) == 0 {
		return 0, nil
	}
	batch := &pgx.Batch{}
	for i, u := range items {
		if u.Scope == "" {
			return 0, fmt.Errorf("set embeddings: row %d has no scope", u.ID)
		}
		vec := pgvector.NewVector(vecs[i]) //nolint:gosec // G602: vecs has len(items), checked above
		// A belief that gains a vector is new to consolidation, which only sees embedded
		// beliefs: its updated_at moves so that the next pass takes it as a seed.
		sql := `UPDATE belief SET embedding = $2::vector, embed_model = $3, updated_at = $4
			WHERE scope = $5 AND id = (SELECT id FROM belief WHERE scope = $5 AND id = $1 AND embed_model IS DISTINCT FROM $3
				AND status <> 'forgotten' FOR NO KEY UPDATE SKIP LOCKED)`
		args := []any{u.ID, vec, model, s.clock(), u.Scope}
		if u.Event {
			sql = `UPDATE revision_event SET embedding = $2::vector, embed_model = $3
				WHERE scope = $7 AND id = (SELECT id FROM revision_event WHERE scope = $7 AND id = $1 AND embed_model IS DISTINCT FROM $3
					AND old_statement = $4 AND coalesce(excerpt, '') = $5 AND coalesce(new_statement, '') = $6
					FOR NO KEY UPDATE SKIP LOCKED)`
			args = []any{u.ID, vec, model, u.parts[0], u.parts[1], u.parts[2], u.Scope}
		}
		batch.Queue(sql, args...)
	}
	br := s.db.SendBatch(ctx, batch)
	stored := 0
	for range items {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			return stored, fmt.Errorf("set embeddings: %w", err)
		}
		stored += int(tag.RowsAffected())
	}
	if err := br.Close(); err != nil {
		return stored, fmt.Errorf("set embeddings: %w", err)
	}
	return stored, nil
}
