package memory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// notForgottenSQL keeps out events that quote a forgotten belief: forgetting hides a
// belief from every prompt, examples included.
const notForgottenSQL = `NOT EXISTS (SELECT 1 FROM belief f
	WHERE f.scope = e.scope AND f.id IN (e.old_belief_id, e.new_belief_id) AND f.status = 'forgotten')`

// ExamplesAvailable says whether any of scopes holds a revision to learn from embedded
// with model: a revision event (not a reinforcement or a revert) that quotes no
// forgotten belief, or a refused revision an operator dismissed.
func (s *Store) ExamplesAvailable(ctx context.Context, scopes []string, model string) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM revision_event e
			WHERE scope = ANY($1) AND embed_model = $2 AND action <> 'reinforce' AND action <> 'revert' AND `+notForgottenSQL+`)
		OR EXISTS (SELECT 1 FROM belief_conflict c WHERE scope = ANY($1) AND embed_model = $2 AND resolution = 'dismissed')`,
		scopes, model).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("look for examples of %v: %w", scopes, err)
	}
	return ok, nil
}

// DismissalQuery selects the dismissed revisions nearest to a vector.
type DismissalQuery struct {
	Scopes []string
	Model  string
	Vector []float32
	Limit  int
}

// Dismissal is a refused revision an operator dismissed: what its target said, and what
// it was not changed to.
type Dismissal struct {
	// ConflictID is the review item.
	ConflictID int64
	Scope      string
	Action     string
	Reason     string
	// Old is the target's statement, New the one proposed, Excerpt the quote.
	Old, New, Excerpt string
	Distance          float64
}

// NearestDismissals is up to q.Limit refused revisions an operator dismissed in
// q.Scopes, nearest to q.Vector first. Dismissals are few (operators make them one by
// one): an exact scan, as no index holds them.
func (s *Store) NearestDismissals(ctx context.Context, q DismissalQuery) ([]Dismissal, error) {
	rows, err := s.db.Query(ctx, `SELECT c.id, c.scope, c.action, coalesce(c.reason, ''), t.statement,
			coalesce(c.proposed->>'statement', ''), coalesce(c.proposed->>'quote', ''), c.embedding <=> $3 AS distance
		FROM belief_conflict c JOIN belief t ON t.id = c.target_belief_id
		WHERE c.scope = ANY($1) AND c.embed_model = $2 AND c.resolution = 'dismissed' AND c.kind = 'refused'
			AND t.status <> 'forgotten'
			AND NOT EXISTS (SELECT 1 FROM belief f WHERE f.id = c.belief_id AND f.status = 'forgotten')
		ORDER BY distance LIMIT $4`, q.Scopes, q.Model, pgvector.NewVector(q.Vector), q.Limit)
	if err != nil {
		return nil, fmt.Errorf("dismissed revisions of %v: %w", q.Scopes, err)
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Dismissal, error) {
		var d Dismissal
		err := row.Scan(&d.ConflictID, &d.Scope, &d.Action, &d.Reason, &d.Old, &d.New, &d.Excerpt, &d.Distance)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("dismissed revisions of %v: %w", q.Scopes, err)
	}
	return ds, nil
}
