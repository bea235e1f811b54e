package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
)

func (c *cli) assert(scope, statement, attribute string) {
	c.t.Helper()
	_, err := c.store.Apply(context.Background(), &memory.Batch{Scope: scope, Origin: memory.RevisionOperator,
		Facts: []memory.Fact{{Statement: statement, Attribute: attribute, Confidence: 1, Origin: memory.OriginUserStated}}})
	require.NoError(c.t, err)
}

func TestListInherit(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.assert("acme", "Team chats on Slack", "chat_tool")
	c.assert("acme", "Support hours are 9 to 5", "support_hours")
	c.assert("acme/user:1", "User chats on Signal", "chat_tool")

	var got []memory.Belief
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("list", "--scope", "acme/user:1", "--inherit", "--json")), &got))
	scopes := map[string]string{}
	for _, b := range got {
		scopes[b.Statement] = b.Scope
	}
	require.Equal(t, map[string]string{"User chats on Signal": "acme/user:1", "Support hours are 9 to 5": "acme"}, scopes)
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("list", "--scope", "acme/user:1", "--json")), &got))
	require.Len(t, got, 1)
}

func TestForgetScopePrefix(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.assert("acme", "Team chats on Slack", "chat_tool")
	c.assert("acme/user:1", "User chats on Signal", "chat_tool")
	c.assert("acme/user:2", "User likes tea", "drink")

	for _, args := range [][]string{
		{"forget", "--scope-prefix", "acme/", "--all"},
		{"forget", "--scope-prefix", "acme/", "--purge"},
		{"forget", "--scope-prefix", "acme/", "--all", "--purge", "--scope", "acme/user:1"},
		{"forget", "--scope-prefix", "", "--all", "--purge"},
		{"forget", "--scope-prefix", "*", "--all", "--purge"},
	} {
		_, stderr, code := c.run(args...)
		require.Equal(t, config.ExitUsage, code, "%v: %s", args, stderr)
	}
	all, err := c.store.All(context.Background(), "acme/user:1")
	require.NoError(t, err)
	require.Len(t, all, 1, "bad usage erases nothing")

	out := c.mustRun("forget", "--scope-prefix", "acme/", "--all", "--purge", "--yes")
	require.Contains(t, out, `purged scope "acme/user:1" for good`)
	require.Contains(t, out, `purged scope "acme/user:2" for good`)
	require.NotContains(t, out, `"acme" `)
	org, err := c.store.Current(context.Background(), "acme")
	require.NoError(t, err)
	require.Len(t, org, 1)

	require.Contains(t, c.mustRun("forget", "--scope-prefix", "acme/", "--all", "--purge"), "nothing to erase")
	require.Contains(t, c.mustRun("forget", "--scope-prefix", "*", "--all", "--purge", "--yes"), `purged scope "acme" for good`)
}

// Erasing a whole scope or subtree asks at a terminal, and needs --yes without one.
func TestErasureIsConfirmed(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.assert("acme/user:1", "User chats on Signal", "chat_tool")
	c.assert("user:9", "User likes tea", "drink")
	left := func(scope string) int {
		all, err := c.store.All(context.Background(), scope)
		require.NoError(t, err)
		return len(all)
	}
	for _, args := range [][]string{
		{"forget", "--scope", "user:9", "--all", "--purge"},
		{"forget", "--scope-prefix", "acme/", "--all", "--purge"},
	} {
		_, stderr, code := c.run(args...)
		require.Equal(t, config.ExitUsage, code, "%v: %s", args, stderr)
		require.Contains(t, stderr, "add --yes")
	}
	require.Equal(t, 1, left("user:9"))
	require.Equal(t, 1, left("acme/user:1"))

	getenv := func(k string) string { return map[string]string{"DATABASE_URL": c.schema.URL}[k] }
	// /dev/null and a pipe are no terminal: nobody is asked, --yes must say it.
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	for _, in := range []*os.File{null, r} {
		confirm := confirmerOn(in, io.Discard)
		require.Nil(t, confirm, in.Name())
		var out, errOut bytes.Buffer
		err := runWith(context.Background(), []string{"forget", "--scope", "user:9", "--all", "--purge"}, getenv, confirm, &out, &errOut)
		require.Equal(t, config.ExitUsage, exitCode(err, io.Discard), in.Name())
	}
	require.Equal(t, 1, left("user:9"))

	ask := func(answer bool) (*[]string, confirmer) {
		var asked []string
		return &asked, func(q string) (bool, error) { asked = append(asked, q); return answer, nil }
	}
	asked, no := ask(false)
	var out, errOut bytes.Buffer
	require.NoError(t, runWith(context.Background(), []string{"forget", "--scope-prefix", "acme/", "--all", "--purge"}, getenv, no, &out, &errOut))
	require.Contains(t, (*asked)[0], `Erasing 1 scope starting with "acme/" (acme/user:1)`, "the question names what goes")
	require.Contains(t, out.String(), "nothing was erased")
	require.Equal(t, 1, left("acme/user:1"))

	_, yes := ask(true)
	require.NoError(t, runWith(context.Background(), []string{"forget", "--scope", "user:9", "--all", "--purge"}, getenv, yes, &out, &errOut))
	require.Zero(t, left("user:9"))
}
