package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScopes(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.seedMove("acme/user:1") // Miami current, NYC history; its episode is still pending
	for _, ep := range []struct{ hash, state string }{{"a", "pending"}, {"b", "failed"}, {"c", "applied"}} {
		_, err := c.schema.Pool.Exec(context.Background(), `INSERT INTO episode (scope, messages, content_hash, occurred_at, state)
			VALUES ('acme/user:2', '[]', $1, now(), $2)`, ep.hash, ep.state)
		require.NoError(t, err)
	}
	c.seedMove("other")

	var rows []scopeRow
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("scopes", "--prefix", "acme/", "--json")), &rows))
	require.Len(t, rows, 2, "only the prefix's scopes")
	require.Equal(t, "acme/user:1", rows[0].Scope)
	require.Equal(t, 1, rows[0].CurrentBeliefs, "history is not current")
	require.Equal(t, 1, rows[0].PendingEpisodes)
	require.NotNil(t, rows[0].OldestPendingAgeSeconds)
	require.GreaterOrEqual(t, *rows[0].OldestPendingAgeSeconds, 0.0)
	require.Equal(t, "acme/user:2", rows[1].Scope)
	require.Equal(t, 0, rows[1].CurrentBeliefs, "a scope with episodes and no beliefs is listed")
	require.Equal(t, 1, rows[1].PendingEpisodes)
	require.Equal(t, 1, rows[1].FailedEpisodes)

	table := c.mustRun("scopes")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 4, "a header and three scopes")
	require.Regexp(t, `^SCOPE\s+CURRENT\s+PENDING\s+FAILED\s+OLDEST PENDING\s+TO RE-EMBED$`, lines[0])
	require.Regexp(t, `^acme/user:2\s+0\s+1\s+1\s+\S+ ago\s+0$`, lines[2])

	backlog, err := c.store.Backlog(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, backlog.Pending)
	require.Equal(t, 1, backlog.Failed)
	require.Equal(t, 3, backlog.Scopes)
	require.False(t, backlog.OldestPendingAt.IsZero())
}
