package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// notForgottenSQL keeps out events that quote a forgotten belief: forgetting hides a
// belief from every prompt, examples included.
const notForgottenSQL = `NOT EXISTS (SELECT 1 FROM belief f
	WHERE f.scope = e.scope AND f.id IN (e.old_belief_id, e.new_belief_id) AND f.status = 'forgotten')`

// queueExamplesAvailable queues on b the reads of whether any of scopes holds a
// revision to learn from embedded with model: a revision event (not a reinforcement or
// a revert) that quotes no forgotten belief, or a refused revision an operator
// dismissed. One read a scope, so that each stays on its scope's shard on Citus; ok is
// set once b is sent.
func queueExamplesAvailable(b *pgx.Batch, scopes []string, model string, ok *bool) {
	for _, scope := range scopes {
		b.Queue(`SELECT EXISTS (SELECT 1 FROM revision_event e
				WHERE e.scope = $1 AND e.embed_model = $2 AND e.action <> 'reinforce' AND e.action <> 'revert' AND `+notForgottenSQL+`)
			OR EXISTS (SELECT 1 FROM belief_conflict c WHERE c.scope = $1 AND c.embed_model = $2 AND c.resolution = 'dismissed')`,
			scope, model).QueryRow(func(row pgx.Row) error {
			var found bool
			if err := row.Scan(&found); err != nil {
				return fmt.Errorf("look for examples of %q: %w", scope, err)
			}
			*ok = *ok || found
			return nil
		})
	}
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
// one): an exact scan, as no index holds them. One query per scope, each on its scope's
// shard on Citus (its joins name the scope), merged here.
func (s *Store) NearestDismissals(ctx context.Context, q DismissalQuery) ([]Dismissal, error) {
	var out []Dismissal
	for _, scope := range q.Scopes {
		ds, err := s.nearestDismissals(ctx, scope, q)
		if err != nil {
			return nil, err
		}
		out = append(out, ds...)
	}
	slices.SortStableFunc(out, func(a, b Dismissal) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.ConflictID, b.ConflictID))
	})
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// nearestDismissals is NearestDismissals of one scope.
func (s *Store) nearestDismissals(ctx context.Context, scope string, q DismissalQuery) ([]Dismissal, error) {
	rows, err := s.db.Query(ctx, `SELECT c.id, c.scope, c.action, coalesce(c.reason, ''), t.statement,
			coalesce(c.proposed->>'statement', ''), coalesce(c.proposed->>'quote', ''), c.embedding <=> $3 AS distance
		FROM belief_conflict c JOIN belief t ON t.scope = c.scope AND t.id = c.target_belief_id
		WHERE c.scope = $1 AND t.scope = $1 AND c.embed_model = $2 AND c.resolution = 'dismissed' AND c.kind = 'refused'
			AND t.status <> 'forgotten'
			AND NOT EXISTS (SELECT 1 FROM belief f WHERE f.scope = $1 AND f.id = c.belief_id AND f.status = 'forgotten')
		ORDER BY distance, c.id LIMIT $4`, scope, q.Model, pgvector.NewVector(q.Vector), q.Limit)
	if err != nil {
		return nil, fmt.Errorf("dismissed revisions of %q: %w", scope, err)
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Dismissal, error) {
		var d Dismissal
		err := row.Scan(&d.ConflictID, &d.Scope, &d.Action, &d.Reason, &d.Old, &d.New, &d.Excerpt, &d.Distance)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("dismissed revisions of %q: %w", scope, err)
	}
	return ds, nil
}
