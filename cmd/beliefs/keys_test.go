package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
)

// apiCLI runs beliefs with a database and a fake LLM.
type apiCLI struct {
	t      *testing.T
	schema *dbtest.Schema
	llm    *llmtest.Server
	env    map[string]string
}

func newAPICLI(t *testing.T) *apiCLI {
	t.Helper()
	schema := dbtest.New(t)
	srv := llmtest.NewServer(t)
	return &apiCLI{t: t, schema: schema, llm: srv, env: map[string]string{
		"DATABASE_URL": schema.URL, "LLM_PROVIDER": "ollama", "OLLAMA_HOST": srv.URL(),
		"CHAT_MODEL": llmtest.DefaultChatModel, "EMBED_MODEL": llmtest.DefaultEmbedModel, "LOG_LEVEL": "warn",
	}}
}

func (c *apiCLI) run(args ...string) (string, string, int) {
	c.t.Helper()
	var stdout, stderr bytes.Buffer
	code := exitCode(run(context.Background(), args, func(k string) string { return c.env[k] }, &stdout, &stderr), &stderr)
	return stdout.String(), stderr.String(), code
}

func TestKeysCommands(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	stdout, stderr, code := c.run("keys", "create", "--name", "support agent", "--scopes", "tenant:a/,tenant:b/", "--rights", "read,write")
	require.Zero(t, code, stderr)
	token := strings.TrimSpace(stdout)
	require.Regexp(t, `^credo_[0-9a-f]{12}_[0-9a-f]{64}$`, token, "standard output is the key alone")
	require.Contains(t, stderr, "shown this once")
	require.Contains(t, stderr, "tenant:a/, tenant:b/")
	p, err := api.Authenticate(context.Background(), c.schema.Pool, token)
	require.NoError(t, err)
	require.Equal(t, []api.Right{api.RightWrite, api.RightRead}, p.Rights)

	stdout, stderr, code = c.run("keys", "create", "--name", "admin", "--scopes", "*", "--rights", "read,write,operate,purge", "--json")
	require.Zero(t, code, stderr)
	var created struct {
		api.Key
		Token string `json:"key"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &created))
	require.Equal(t, []string{"*"}, created.Scopes)
	require.True(t, strings.HasPrefix(created.Token, "credo_"+created.Prefix+"_"))

	stdout, stderr, code = c.run("keys", "list", "--json")
	require.Zero(t, code, stderr)
	var keys []api.Key
	require.NoError(t, json.Unmarshal([]byte(stdout), &keys))
	require.Len(t, keys, 2)
	require.Equal(t, "support agent", keys[0].Name)
	require.NotContains(t, stdout, token[len(token)-64:], "no secret is listed")
	require.NotContains(t, stdout, created.Token[len(created.Token)-64:])

	stdout, stderr, code = c.run("keys", "revoke", "--id", "1")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, `revoked key 1 "support agent"`)
	require.NotContains(t, stderr, "last active key", "key 2 is still active")
	_, stderr, code = c.run("keys", "revoke", "--id", "2")
	require.Zero(t, code, stderr)
	require.Contains(t, stderr, "that was the last active key", "revoking the last key says what follows")
	_, err = api.Authenticate(context.Background(), c.schema.Pool, token)
	require.ErrorIs(t, err, api.ErrInvalidKey)
	stdout, _, code = c.run("keys", "list")
	require.Zero(t, code)
	require.Contains(t, stdout, "support agent")
	require.Contains(t, stdout, "PREFIX")

	for _, bad := range []struct {
		args []string
		code int
	}{
		{[]string{"keys", "create", "--name", "x", "--scopes", "a/"}, config.ExitUsage},
		{[]string{"keys", "create", "--name", "x", "--scopes", "a/", "--rights", "read,admin"}, config.ExitUsage},
		{[]string{"keys", "create", "--name", "x", "--scopes", " , ", "--rights", "read"}, config.ExitUsage},
		{[]string{"keys", "revoke"}, config.ExitUsage},
		{[]string{"keys", "revoke", "--id", "abc"}, config.ExitUsage},
		{[]string{"keys", "revoke", "--id", "999"}, config.ExitNotFound},
		{[]string{"keys"}, config.ExitUsage},
		{[]string{"keys", "rotate"}, config.ExitUsage},
		{[]string{"mcp"}, config.ExitUsage},
	} {
		_, stderr, code := c.run(bad.args...)
		require.Equal(t, bad.code, code, "%v: %s", bad.args, stderr)
	}
	_, stderr, _ = c.run("help")
	require.Contains(t, stderr, "keys create")
	require.Contains(t, stderr, "mcp")
}

// TestMCPOverStdio serves the tools as `beliefs mcp` does, over a pipe, for one key.
func TestMCPOverStdio(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	ctx := t.Context()
	_, token, err := api.CreateKey(ctx, c.schema.Pool, "desktop", []string{"user:"}, []api.Right{api.RightWrite, api.RightRead})
	require.NoError(t, err)

	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	groups := config.GroupDB | config.GroupLLM
	cfg, err := config.Load(fs, groups, func(k string) string { return c.env[k] })
	require.NoError(t, err)
	require.NoError(t, cfg.Check(groups))
	var stderr bytes.Buffer
	e := &env{cfg: cfg, stdout: io.Discard, stderr: &stderr}
	defer e.close()

	require.ErrorContains(t, serveMCP(ctx, e, "credo_000000000000_"+strings.Repeat("0", 64), &mcp.InMemoryTransport{}), "unauthorized")

	// Over stdio: a pipe each way.
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveMCP(ctx, e, token, &mcp.IOTransport{Reader: serverIn, Writer: serverOut}) }()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	require.NoError(t, err)
	tools, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 8, "remember, recall, context, ask, forget, conflicts, entities, entity")

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{
		"scope": "user:ana", "messages": []map[string]string{{"role": "user", "content": "I live in Lisbon."}}}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var n int
	require.NoError(t, c.schema.Pool.QueryRow(ctx, "SELECT count(*) FROM episode WHERE scope = 'user:ana'").Scan(&n))
	require.Equal(t, 1, n)
	require.NoError(t, c.schema.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job").Scan(&n))
	require.Equal(t, 1, n, "an extraction job for the worker")

	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"scope": "tenant:b/x", "query": "where"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"scope": "user:ana", "query": "where does she live"}})
	require.NoError(t, err)
	require.False(t, res.IsError)

	require.NoError(t, session.Close())
	require.NoError(t, <-done, "a client going away ends the command cleanly")
}
