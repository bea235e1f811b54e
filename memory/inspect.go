package memory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Reads of the web inspector that no other reader needs.

// OpenItems counts the open review items of every scope starting with prefix ("" for
// all), leaving out, as Conflicts does, the items about forgotten beliefs. Scopes
// without open items are absent. It spans scopes: on Citus every shard counts its own,
// which needs the subquery joined on the scope (the distribution column).
func (s *Store) OpenItems(ctx context.Context, prefix string) (map[string]int, error) {
	rows, err := s.db.Query(ctx, `SELECT c.scope, count(*) FROM belief_conflict c
		WHERE c.status = 'open' AND starts_with(c.scope, $1) AND NOT EXISTS (SELECT 1 FROM belief f
			WHERE f.scope = c.scope AND f.status = 'forgotten' AND (f.id = c.belief_id OR (c.kind = 'refused' AND f.id = c.target_belief_id)))
		GROUP BY c.scope`, prefix)
	return countsByScope(rows, err, "count open review items")
}

// countsByScope collects a query's (scope, count) rows; what names the count in errors.
func countsByScope(rows pgx.Rows, err error, what string) (map[string]int, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := map[string]int{}
	var (
		scope string
		n     int
	)
	_, err = pgx.ForEachRow(rows, []any{&scope, &n}, func() error {
		out[scope] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// EventsAbout is the revision events of scope that revised one of the beliefs ids or
// wrote one of them, oldest first. As in Events, events of forgotten beliefs are left
// out: they quote them.
func (s *Store) EventsAbout(ctx context.Context, scope string, ids []int64) ([]Event, error) {
	rows, err := s.db.Query(ctx, `SELECT `+eventColumns+`
		FROM revision_event e WHERE e.scope = $1 AND (e.old_belief_id = ANY($2) OR e.new_belief_id = ANY($2))
			AND `+eventNotForgotten+`
		ORDER BY e.created_at, e.id`, scope, ids)
	if err != nil {
		return nil, fmt.Errorf("events about beliefs of %q: %w", scope, err)
	}
	evs, err := pgx.CollectRows(rows, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("events about beliefs of %q: %w", scope, err)
	}
	return evs, nil
}

// FromEpisode is the beliefs of scope that episode stated or restated, forgotten ones
// left out, earliest first: what a transcript taught memory.
func (s *Store) FromEpisode(ctx context.Context, scope string, episode int64) ([]Belief, error) {
	bs, err := s.queryBeliefs(ctx, `b.scope = $1 AND b.status <> 'forgotten' AND (b.episode_id = $2
			OR b.id IN (SELECT r.old_belief_id FROM revision_event r WHERE r.episode_id = $2 AND r.action = 'reinforce' AND r.reverted_by IS NULL))
		ORDER BY b.valid_from, b.id`, scope, episode)
	if err != nil {
		return nil, fmt.Errorf("beliefs from episode %d: %w", episode, err)
	}
	return bs, nil
}
