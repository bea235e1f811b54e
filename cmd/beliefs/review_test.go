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

// seedRefusal stores an authoritative plan in scope and an extraction's refused attempt
// to supersede it; it returns the plan and the review item.
func seedRefusal(t *testing.T, store *memory.Store, scope string) (plan, item int64) {
	t.Helper()
	ctx := context.Background()
	res, err := store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, Facts: []memory.Fact{{
		Statement: "Account plan is Pro", Attribute: "plan", Confidence: 1, Origin: memory.OriginAuthoritative}}})
	require.NoError(t, err)
	plan = res.Facts[0].BeliefID
	res, err = store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, Candidates: []int64{plan},
		Facts: []memory.Fact{{Statement: "Account plan is Free", Attribute: "plan", Confidence: 0.9, Origin: memory.OriginUserStated,
			Quote: "we downgraded", Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}}}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeConflict, res.Facts[0].Kind)
	return plan, res.Facts[0].ConflictID
}

func TestConflictsAndResolve(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	store := memory.NewStore(c.schema.Pool, nil)
	plan, item := seedRefusal(t, store, "acme/u1")
	_, other := seedRefusal(t, store, "acme/u2")
	id := strconv.FormatInt(item, 10)

	stdout, stderr, code := c.run("conflicts", "--scope", "acme/u1", "--json")
	require.Zero(t, code, stderr)
	var items []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &items))
	require.Len(t, items, 1)
	// DESIGN.md: at least these fields.
	for _, key := range []string{"id", "scope", "kind", "belief_id", "target_id", "statement", "detail", "created_at", "resolved_at", "resolution"} {
		require.Contains(t, items[0], key)
	}
	require.JSONEq(t, `"refused"`, string(items[0]["kind"]))
	require.JSONEq(t, strconv.FormatInt(plan, 10), string(items[0]["target_id"]))
	require.JSONEq(t, `"Account plan is Free"`, string(items[0]["statement"]))
	require.JSONEq(t, `null`, string(items[0]["resolved_at"]))
	require.Contains(t, string(items[0]["target"]), `"statement": "Account plan is Pro"`, "the target beside the proposal")
	require.Contains(t, string(items[0]["why"]), "only an operator overrides it", "the cause in words")
	text := c.mustRunOK("conflicts", "--scope", "acme/u1")
	require.Contains(t, text, "Account plan is Pro (active)")
	require.Contains(t, text, "is held more firmly than this revision (it is authoritative): only an operator overrides it.")

	for _, args := range [][]string{
		{"resolve", "--id", id},
		{"resolve", "--id", id, "--apply", "--dismiss"},
		{"resolve", "--apply"},
		{"resolve", "--id", "x", "--apply"},
	} {
		_, _, code := c.run(args...)
		require.Equal(t, config.ExitUsage, code, args)
	}
	_, stderr, code = c.run("resolve", "--id", strconv.FormatInt(item+1000, 10), "--apply")
	require.Equal(t, config.ExitNotFound, code, stderr)
	_, stderr, code = c.run("resolve", "--id", strconv.FormatInt(other, 10), "--apply", "--scope", "acme/u1")
	require.Equal(t, config.ExitNotFound, code, "an item of another scope is not found: %s", stderr)

	stdout, stderr, code = c.run("resolve", "--id", id, "--apply", "--note", "confirmed")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "applied: superseded belief "+strconv.FormatInt(plan, 10))
	current, err := store.Current(context.Background(), "acme/u1")
	require.NoError(t, err)
	require.Equal(t, "Account plan is Free", current[0].Statement)

	_, stderr, code = c.run("resolve", "--id", id, "--dismiss")
	require.Equal(t, config.ExitFailed, code)
	require.Contains(t, stderr, "already resolved")

	stdout, stderr, code = c.run("resolve", "--id", strconv.FormatInt(other, 10), "--dismiss", "--json")
	require.Zero(t, code, stderr)
	var decided memory.Decided
	require.NoError(t, json.Unmarshal([]byte(stdout), &decided))
	require.Equal(t, memory.ResolvedDismissed, *decided.Item.Resolution)

	stdout = c.mustRunOK("conflicts", "--scope", "acme/u1")
	require.NotContains(t, stdout, "Account plan is Free", "resolved items leave the open queue")
	stdout = c.mustRunOK("conflicts", "--scope", "acme/u1", "--all")
	require.Contains(t, stdout, "applied")
}

func (c *apiCLI) mustRunOK(args ...string) string {
	c.t.Helper()
	stdout, stderr, code := c.run(args...)
	require.Zero(c.t, code, "beliefs %v: %s", args, stderr)
	return stdout
}
