package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
)

// TestUnknownScope: a read of a scope that never held an episode or a belief is not
// found (exit 3), naming the nearest scope, whatever the command and the format; a
// known scope with nothing to show, an inherited read of an organisation's defaults,
// and a memory that holds no scope at all read empty (exit 0).
func TestUnknownScope(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	ctx := context.Background()
	store := memory.NewStore(c.schema.Pool, nil)
	apply := func(scope, statement, attribute string) {
		_, err := store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, Facts: []memory.Fact{
			{Statement: statement, Attribute: attribute, Confidence: 0.9, Origin: memory.OriginUserStated}}})
		require.NoError(t, err)
	}

	// A fresh memory: nothing could have been meant instead; stdout keeps its contract.
	stdout, stderr, code := c.run("list", "--scope", "user:anna", "--json")
	require.Zero(t, code, stderr)
	require.Equal(t, "[]\n", stdout)
	require.Equal(t, "beliefs: no scope user:anna: memory holds no scope yet\n", stderr)

	apply("user:ana", "User lives in Miami", "location")
	for _, args := range [][]string{
		{"list"}, {"list", "--json"}, {"list", "--all"}, {"list", "--as-of", "2026-01-01"}, {"list", "--inherit"},
		{"episodes"}, {"episodes", "--json"}, {"events"}, {"conflicts", "--json"},
		{"context"}, {"context", "--json"}, {"ask", "--question", "Where does Ana live?"},
	} {
		args = append(args, "--scope", "user:anna")
		stdout, stderr, code := c.run(args...)
		require.Equal(t, config.ExitNotFound, code, "%v: %s", args, stderr)
		require.Equal(t, "beliefs: no scope user:anna (did you mean user:ana?)\n", stderr, args)
		require.Empty(t, stdout, args)
	}
	_, stderr, code = c.run("list", "--scope", "customer:9")
	require.Equal(t, config.ExitNotFound, code)
	require.Equal(t, "beliefs: no scope customer:9\n", stderr, "nothing near")
	require.Empty(t, c.llm.Chats(), "no model was asked")

	// A known scope with nothing to show is empty memory.
	for _, args := range [][]string{{"episodes"}, {"conflicts"}, {"list", "--as-of", "2020-01-01", "--json"}} {
		stdout, stderr, code := c.run(append(args, "--scope", "user:ana")...)
		require.Zero(t, code, "%v: %s", args, stderr)
		require.Empty(t, stderr, args)
		require.NotContains(t, stdout, "Miami", args)
	}

	// An organisation's defaults: a scope with nothing of its own reads them.
	apply("acme", "Company plan is Pro", "plan")
	require.Contains(t, c.mustRunOK("list", "--scope", "acme/user:1", "--inherit"), "Company plan is Pro")
	require.Contains(t, c.mustRunOK("context", "--scope", "acme/user:1", "--inherit"), "Company plan is Pro")
	_, stderr, code = c.run("list", "--scope", "acme/user:1")
	require.Equal(t, config.ExitNotFound, code, "without --inherit it is not there")
	require.Equal(t, "beliefs: no scope acme/user:1\n", stderr)
}
