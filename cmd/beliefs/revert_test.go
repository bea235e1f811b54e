package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
)

// seedMove stores New York and an extraction's supersede of it by Miami in scope; it
// returns the supersede.
func seedMove(t *testing.T, store *memory.Store, scope string) memory.Outcome {
	t.Helper()
	ctx := context.Background()
	f := memory.Fact{Statement: "User lives in New York City", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated}
	res, err := store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, Facts: []memory.Fact{f}})
	require.NoError(t, err)
	f.Statement, f.Resolves = "User lives in Miami", &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, Candidates: []int64{res.Facts[0].BeliefID},
		Facts: []memory.Fact{f}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeSuperseded, res.Facts[0].Kind)
	return res.Facts[0]
}

func TestRevertAndAudit(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	store := memory.NewStore(c.schema.Pool, nil)
	sup := seedMove(t, store, "acme/u1")
	seedMove(t, store, "acme/u2")
	event := strconv.FormatInt(sup.EventID, 10)

	for _, args := range [][]string{{"revert"}, {"revert", "--event", "x"}, {"revert", "--event", "0"}, {"audit", "--scope", "a", "--scope-prefix", "a"}, {"audit", "--since", "soon"},
		{"revert", "--event", event, "--note", "a trip \u202eevig"}, {"revert", "--event", event, "--note", "a trip\u2028ID 7 applied"}} {
		_, _, code := c.run(args...)
		require.Equal(t, config.ExitUsage, code, args)
	}
	_, stderr, code := c.run("revert", "--event", strconv.FormatInt(sup.EventID+1000, 10))
	require.Equal(t, config.ExitNotFound, code, stderr)

	stdout := c.mustRunOK("revert", "--event", event, "--note", "they only visited")
	require.Contains(t, stdout, "event "+event+" reverted by event")
	require.Contains(t, stdout, "belief "+strconv.FormatInt(sup.TargetID, 10)+" current again")
	require.Contains(t, stdout, "belief "+strconv.FormatInt(sup.BeliefID, 10)+" retracted as never true")
	current, err := store.Current(context.Background(), "acme/u1")
	require.NoError(t, err)
	require.Equal(t, "User lives in New York City", current[0].Statement)

	_, stderr, code = c.run("revert", "--event", event)
	require.Equal(t, config.ExitFailed, code, "a refused revert exits 1")
	require.Contains(t, stderr, "reverted already")

	// Events show the revert both ways, in JSON and in the table.
	var evs []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("events", "--scope", "acme/u1", "--json")), &evs))
	require.Len(t, evs, 2)
	require.JSONEq(t, `"revert"`, string(evs[0]["action"]))
	require.JSONEq(t, event, string(evs[0]["reverts"]))
	require.JSONEq(t, `null`, string(evs[0]["reverted_by"]))
	require.JSONEq(t, string(evs[0]["id"]), string(evs[1]["reverted_by"]))
	require.JSONEq(t, `null`, string(evs[1]["reverts"]))
	require.NotEqual(t, `null`, string(evs[1]["reverted_at"]))
	table := c.mustRunOK("events", "--scope", "acme/u1")
	require.Contains(t, table, "reverts "+event)
	require.Contains(t, table, "reverted by ")

	var a memory.Audit
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("audit", "--scope-prefix", "acme/", "--json")), &a))
	require.Equal(t, []memory.AuditOrigin{{Origin: memory.RevisionExtraction, Applied: 2, Reverted: 1, Precision: new(0.5)}}, a.Origins)
	require.Equal(t, 1, a.Reverts)
	out := c.mustRunOK("audit", "--scope", "acme/u2")
	require.Regexp(t, `extraction\s+1\s+0\s+0\s+100\.0%`, out)
}
