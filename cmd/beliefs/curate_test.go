package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
)

// runWith is run with env's variables beside DATABASE_URL.
func (c *cli) runWith(env map[string]string, args ...string) (string, string, int) {
	c.t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(name string) string {
		if name == "DATABASE_URL" {
			return c.schema.URL
		}
		return env[name]
	}
	code := exitCode(run(context.Background(), args, getenv, &stdout, &stderr), &stderr)
	return stdout.String(), stderr.String(), code
}

// seedOldMove stores Boston, then Miami superseding it, as known in early 2024: Boston
// has been history for years.
func (c *cli) seedOldMove(scope string) (bostonID, miamiID int64) {
	c.t.Helper()
	ctx := context.Background()
	now := date("2024-01-15")
	store := memory.NewStore(c.schema.Pool, &memory.Config{Now: func() time.Time { return now }})
	fact := func(statement string) memory.Fact {
		return memory.Fact{Statement: statement, Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated}
	}
	res, err := store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: now,
		Facts: []memory.Fact{fact("User lives in Boston")}})
	require.NoError(c.t, err)
	bostonID = res.Facts[0].BeliefID
	now = date("2024-03-20")
	miami := fact("User lives in Miami")
	miami.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: now,
		Candidates: []int64{bostonID}, Facts: []memory.Fact{miami}})
	require.NoError(c.t, err)
	return bostonID, res.Facts[0].BeliefID
}

func TestCurate(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	oldID, currentID := c.seedOldMove("user:42")
	c.seedMove("user:7") // history of today: kept
	retain := map[string]string{"RETAIN_HISTORY": "8760h"}

	var dry memory.Curated
	stdout, stderr, code := c.runWith(retain, "curate", "--dry-run", "--json")
	require.Zero(t, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &dry))
	require.True(t, dry.DryRun)
	require.Len(t, dry.Scopes, 1)
	require.Equal(t, "user:42", dry.Scopes[0].Scope)
	require.Equal(t, []int64{oldID}, dry.Scopes[0].BeliefIDs)
	require.Zero(t, dry.Scopes[0].TombstoneID)

	stdout, stderr, code = c.runWith(retain, "curate", "--dry-run")
	require.Zero(t, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	require.Regexp(t, `^would remove the history retired before \S+ \(dry run: nothing removed\):$`, lines[0])
	require.Regexp(t, `^SCOPE\s+BELIEFS\s+EPISODES\s+EVENTS\s+CONFLICTS$`, lines[1])
	require.Regexp(t, `^user:42\s+1\s+0\s+1\s+0$`, lines[2])
	require.Regexp(t, `^TOTAL\s+1\s+0\s+1\s+0$`, lines[3])
	_, err := c.store.Get(context.Background(), oldID)
	require.NoError(t, err, "a dry run removes nothing")

	var got map[string]json.RawMessage
	stdout, stderr, code = c.runWith(retain, "curate", "--json")
	require.Zero(t, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	for _, key := range []string{"dry_run", "retired_before", "scopes"} {
		require.Contains(t, got, key)
	}
	var scopes []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got["scopes"], &scopes))
	require.Len(t, scopes, 1)
	for _, key := range []string{"scope", "belief_ids", "episode_ids", "counts", "relinked", "tombstone_id"} {
		require.Contains(t, scopes[0], key)
	}
	var done memory.Curated
	require.NoError(t, json.Unmarshal([]byte(stdout), &done))
	require.False(t, done.DryRun)
	require.Positive(t, done.Scopes[0].TombstoneID)
	done.Scopes[0].TombstoneID = 0
	require.Equal(t, dry.Scopes, done.Scopes, "the dry run listed what the run removed")
	_, err = c.store.Get(context.Background(), oldID)
	require.ErrorIs(t, err, memory.ErrNotFound)
	_, err = c.store.Get(context.Background(), currentID)
	require.NoError(t, err)

	stdout, stderr, code = c.runWith(retain, "curate")
	require.Zero(t, code, stderr)
	require.Regexp(t, `^nothing to curate: no belief was retired before \S+\n$`, stdout)
	require.Len(t, mustAllOf(t, c, "user:7"), 2, "today's history is kept")
}

func TestCurateUsage(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, tc := range []struct {
		env    map[string]string
		args   []string
		code   int
		stderr string
	}{
		{nil, []string{"curate"}, config.ExitUsage, "RETAIN_HISTORY is not set: history is kept forever"},
		{nil, []string{"curate", "--dry-run", "--json"}, config.ExitUsage, "RETAIN_HISTORY is not set: history is kept forever"},
		{nil, []string{"curate", "--retain-history", "8760"}, config.ExitUsage, `"8760" is not a duration of at least 1h with its unit`},
		{map[string]string{"RETAIN_HISTORY": "8760h"}, []string{"curate", "--scope", "user:1"}, config.ExitUsage, "flag provided but not defined"},
	} {
		stdout, stderr, code := c.runWith(tc.env, tc.args...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.stderr)
		require.Empty(t, stdout)
	}
	// A bad variable stops the command, naming it.
	stdout, stderr, code := c.runWith(map[string]string{"RETAIN_HISTORY": "8760"}, "curate")
	require.NotZero(t, code)
	require.Contains(t, stderr, `RETAIN_HISTORY: "8760" is not a duration of at least 1h`)
	require.Empty(t, stdout)
}

func mustAllOf(t *testing.T, c *cli, scope string) []memory.Belief {
	t.Helper()
	all, err := c.store.All(context.Background(), scope)
	require.NoError(t, err)
	return all
}
