package memory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// NearestEvents is up to k revision events of scope embedded with model, nearest to vec
// by cosine distance first: the scope's own k nearest, whatever other scopes hold (see
// nearest). Restatements are left out, as they teach nothing about revising, and so
// are the events of forgotten beliefs, which quote them. It is how past revisions are
// found as few-shot examples.
func (s *Store) NearestEvents(ctx context.Context, scope, model string, vec []float32, k int) ([]Event, error) {
	evs, err := nearest(ctx, s, nearestQuery{table: searchEvents, scope: scope, args: []any{scope}, model: model, vec: vec, k: k,
		where: `b.scope = $1 AND b.action <> 'reinforce' AND b.action <> 'revert' AND NOT EXISTS (SELECT 1 FROM belief f
			WHERE f.scope = $1 AND f.id IN (b.old_belief_id, b.new_belief_id) AND f.status = 'forgotten')`},
		rankedEventColumns, scanRankedEvent)
	if err != nil {
		return nil, fmt.Errorf("nearest events of %q: %w", scope, err)
	}
	return evs, nil
}

// rankedEventColumns are eventColumns of an event aliased b, as nearest reads it, and
// the note of the revert that undid it: a reverted event is a negative example.
const rankedEventColumns = `b.id, b.scope, b.action, b.reason, b.origin, b.old_belief_id, b.new_belief_id,
	b.old_statement, b.new_statement, b.excerpt, b.rationale, b.episode_id, b.created_at,
	b.reverts, b.reverted_by, b.reverted_at, (SELECT r.excerpt FROM revision_event r WHERE r.scope = $1 AND r.id = b.reverted_by)`

func scanRankedEvent(row pgx.CollectableRow) (Event, error) {
	var e Event
	err := row.Scan(append(e.fields(), &e.RevertNote, &e.Distance)...)
	e.CreatedAt, e.RevertedAt = e.CreatedAt.UTC(), utcPtr(e.RevertedAt)
	return e, err
}
