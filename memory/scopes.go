package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ScopeStatus is what a scope holds and what waits for it.
type ScopeStatus struct {
	Scope           string `json:"scope"`
	CurrentBeliefs  int    `json:"current_beliefs"`
	PendingEpisodes int    `json:"pending_episodes"`
	FailedEpisodes  int    `json:"failed_episodes"`
	// OldestPendingAt is when the oldest pending episode was enqueued (not when its
	// conversation happened), nil when none is pending.
	OldestPendingAt *time.Time `json:"oldest_pending_at"`
}

// Scopes lists every scope starting with prefix ("" for all) that has beliefs or
// episodes, in scope order, with its counts.
func (s *Store) Scopes(ctx context.Context, prefix string) ([]ScopeStatus, error) {
	rows, err := s.db.Query(ctx, `
		WITH b AS (SELECT scope, count(*) AS current FROM belief
				WHERE status = 'active' AND starts_with(scope, $1) GROUP BY scope),
			e AS (SELECT scope, count(*) FILTER (WHERE state = 'pending') AS pending,
					count(*) FILTER (WHERE state = 'failed') AS failed,
					min(received_at) FILTER (WHERE state = 'pending') AS oldest
				FROM episode WHERE starts_with(scope, $1) GROUP BY scope)
		SELECT scope, coalesce(b.current, 0), coalesce(e.pending, 0), coalesce(e.failed, 0), e.oldest
		FROM b FULL JOIN e USING (scope) ORDER BY scope`, prefix)
	if err != nil {
		return nil, fmt.Errorf("list scopes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ScopeStatus, error) {
		var st ScopeStatus
		err := row.Scan(&st.Scope, &st.CurrentBeliefs, &st.PendingEpisodes, &st.FailedEpisodes, &st.OldestPendingAt)
		return st, err
	})
	if err != nil {
		return nil, fmt.Errorf("list scopes: %w", err)
	}
	return out, nil
}

// Backlog is the extraction backlog of every scope together.
type Backlog struct {
	Pending int
	Failed  int
	// OldestPendingAt is when the oldest pending episode was enqueued; zero when none.
	OldestPendingAt time.Time
	// Scopes counts the scopes with pending episodes.
	Scopes int
}

// Backlog reads the backlog from the pending and failed episodes' indexes, without
// visiting applied episodes: cheap enough for every metrics scrape.
func (s *Store) Backlog(ctx context.Context) (Backlog, error) {
	var b Backlog
	var oldest *time.Time
	err := s.db.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM episode WHERE state = 'pending'),
			(SELECT count(*) FROM episode WHERE state = 'failed'),
			(SELECT min(received_at) FROM episode WHERE state = 'pending'),
			(SELECT count(DISTINCT scope) FROM episode WHERE state = 'pending')`).
		Scan(&b.Pending, &b.Failed, &oldest, &b.Scopes)
	if err != nil {
		return b, fmt.Errorf("read the backlog: %w", err)
	}
	if oldest != nil {
		b.OldestPendingAt = *oldest
	}
	return b, nil
}
