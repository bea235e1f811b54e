package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
)

func TestEpisodesCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	for i, state := range []string{"applied", "pending", "failed"} {
		_, err := c.schema.Pool.Exec(ctx, `INSERT INTO episode (scope, external_id, messages, content_hash, occurred_at, state, attempts, last_error)
			VALUES ('u', $1, '[]', md5($1), now() - make_interval(days => $2), $3, $4, nullif($5, ''))`,
			"conv-"+state, 3-i, state, i, map[string]string{"failed": "malformed model output"}[state])
		require.NoError(t, err)
	}
	var all []map[string]any
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("episodes", "--scope", "u", "--json")), &all))
	require.Len(t, all, 3)
	for _, key := range []string{"id", "scope", "external_id", "state", "attempts", "last_error", "occurred_at", "redacted_at"} {
		require.Contains(t, all[0], key)
	}
	require.NotContains(t, c.mustRun("episodes", "--scope", "u"), "redacted")
	_, err := c.schema.Pool.Exec(ctx, "UPDATE episode SET redacted_at = now() WHERE external_id = 'conv-applied'")
	require.NoError(t, err)
	require.Contains(t, c.mustRun("episodes", "--scope", "u"), "applied (redacted)", "a purge redacted its transcript")
	out := c.mustRun("episodes", "--scope", "u", "--state", "failed")
	require.Contains(t, out, "conv-failed")
	require.Contains(t, out, "malformed model output")
	require.NotContains(t, out, "conv-pending")

	_, stderr, code := c.run("episodes", "--scope", "u", "--state", "done")
	require.Equal(t, config.ExitUsage, code, stderr)

	// A list of a scope whose transcripts are not all applied says so, on stderr.
	stdout, stderr, code := c.run("list", "--scope", "u")
	require.Zero(t, code, stderr)
	require.NotContains(t, stdout, "pending")
	require.Contains(t, stderr, `"u" has 1 pending and 1 failed episodes not in this list`)
}
