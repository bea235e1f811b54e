package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// UnembeddedDismissals lists the review items of scope an operator dismissed that have
// no vector of model, oldest first, with the text Resolve embeds for them (ReviewText):
// a dismissal is a few-shot example of what not to do, found by its vector. An import
// stores them without one. Operators dismiss items one by one: they are few.
func (s *Store) UnembeddedDismissals(ctx context.Context, scope, model string) ([]Unembedded, error) {
	rows, err := s.db.Query(ctx, `SELECT `+strings.ReplaceAll(conflictColumns, "{scope}", "$1")+`
		FROM belief_conflict c WHERE c.scope = $1 AND c.resolution = 'dismissed' AND c.embed_model IS DISTINCT FROM $2
		ORDER BY c.id`, scope, model)
	if err != nil {
		return nil, fmt.Errorf("dismissals of %q to embed: %w", scope, err)
	}
	items, err := pgx.CollectRows(rows, scanConflict)
	if err != nil {
		return nil, fmt.Errorf("dismissals of %q to embed: %w", scope, err)
	}
	out := make([]Unembedded, len(items))
	for i := range items {
		text, err := s.ReviewText(ctx, &items[i])
		if err != nil {
			return nil, err
		}
		out[i] = Unembedded{ID: items[i].ID, Scope: scope, Text: text}
	}
	return out, nil
}

// DismissalScopes is up to limit scopes holding dismissed review items without a vector
// of model, for the background re-embedding after EMBED_MODEL changes: until then a
// scope's dismissals teach its extractions nothing (NearestDismissals compares in the
// configured model). Each is then read and written on its own scope
// (UnembeddedDismissals), one shard's work on Citus; the partial index of migration 019
// finds them, however many items are resolved otherwise.
func (s *Store) DismissalScopes(ctx context.Context, model string, limit int) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT DISTINCT scope FROM belief_conflict
		WHERE resolution = 'dismissed' AND `+notEmbeddedWith(1)+` ORDER BY scope LIMIT $2`, model, limit)
	if err != nil {
		return nil, fmt.Errorf("scopes of dismissals to embed: %w", err)
	}
	scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("scopes of dismissals to embed: %w", err)
	}
	return scopes, nil
}

// SetDismissalEmbeddings stores vecs[i], of model, as the vector of dismissed item
// items[i] of scope, unless it has one of model already, and returns how many it
// stored. Call EnsureEmbeddingModel before.
func (s *Store) SetDismissalEmbeddings(ctx context.Context, scope, model string, items []Unembedded, vecs [][]float32) (int, error) {
	if len(items) != len(vecs) {
		return 0, fmt.Errorf("set dismissal embeddings: %d items, %d vectors", len(items), len(vecs))
	}
	batch := &pgx.Batch{}
	for i, it := range items {
		batch.Queue(`UPDATE belief_conflict SET embedding = $3::vector, embed_model = $4
			WHERE scope = $1 AND id = $2 AND resolution = 'dismissed' AND embed_model IS DISTINCT FROM $4`,
			scope, it.ID, pgvector.NewVector(vecs[i]), model)
	}
	br := s.db.SendBatch(ctx, batch)
	defer br.Close()
	stored := 0
	for range items {
		tag, err := br.Exec()
		if err != nil {
			return stored, fmt.Errorf("set dismissal embeddings of %q: %w", scope, err)
		}
		stored += int(tag.RowsAffected())
	}
	return stored, br.Close()
}
