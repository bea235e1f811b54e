package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// bearerTransport adds a key to every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

// mcpSession connects an MCP client of the SDK to the server's /mcp over streamable
// HTTP, with token.
func (h *harness) mcpSession(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	session, err := h.connectMCP(token)
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	return session
}

func (h *harness) connectMCP(token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	hc := &http.Client{Transport: bearerTransport{token: token, base: h.http.Client().Transport}}
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.http.URL + MCPPath, HTTPClient: hc}, nil)
}

// callTool calls a tool that must succeed and decodes its structured answer into out.
func callTool(t *testing.T, s *mcp.ClientSession, tool string, args any, out any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s: %s", tool, text(res))
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, out))
}

// toolError calls a tool that must fail and returns its error text.
func (h *harness) toolError(t *testing.T, s *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	require.True(t, res.IsError, "%s: %s", tool, text(res))
	h.mu.Lock()
	h.bodies = append(h.bodies, text(res))
	h.mu.Unlock()
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var out string
	var outSb71 strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			outSb71.WriteString(tc.Text)
		}
	}
	out += outSb71.String()
	return out
}

func rememberArgs(scope, occurredAt, says string) map[string]any {
	return map[string]any{"scope": scope, "occurred_at": occurredAt, "messages": []map[string]string{
		{"role": "user", "content": says}, {"role": "assistant", "content": "Noted."}}}
}

// TestMCPRememberRecall: an MCP client of the same SDK lists the tools and runs
// remember → (the worker) → recall, history and forget, in memory and over HTTP.
func TestMCPRememberRecall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightWrite, RightRead, RightOperate)
	const scope = "tenant:a/user:7"
	p, err := Authenticate(context.Background(), h.p.Schema.Pool, key)
	require.NoError(t, err)

	// In memory, as a desktop agent over stdio would be served.
	clientT, serverT := mcp.NewInMemoryTransports()
	ctx := t.Context()
	go func() {
		_ = h.api.MCPServer(func(context.Context) (*Principal, error) { return p, nil }).Run(ctx, serverT)
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	session, err := client.Connect(ctx, clientT, nil)
	require.NoError(t, err)
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		require.NotEmpty(t, tool.Description)
		require.NotNil(t, tool.InputSchema)
	}
	slices.Sort(names)
	require.Equal(t, []string{"ask", "context", "entities", "entity", "forget", "history", "recall", "remember"}, names)

	var first Enqueued
	callTool(t, session, "remember", rememberArgs(scope, "2026-01-15T10:00:00Z", "I live in New York City."), &first)
	require.Equal(t, 1, first.Enqueued)
	h.p.Drain(t)
	var second Enqueued
	callTool(t, session, "remember", rememberArgs(scope, "2026-03-20T14:00:00Z", "I moved to Miami last month."), &second)
	h.p.Drain(t)

	var now Beliefs
	callTool(t, session, "recall", map[string]any{"scope": scope, "query": "Where does the user live?"}, &now)
	require.Equal(t, "current", now.Mode)
	require.Equal(t, []string{miami}, statements(now.Beliefs))
	var before Beliefs
	callTool(t, session, "recall", map[string]any{"scope": scope, "query": "Where did the user live before Miami?"}, &before)
	require.Equal(t, "history", before.Mode)
	require.True(t, before.AutoHistory)
	require.ElementsMatch(t, []string{nyc, miami}, statements(before.Beliefs))

	var hist History
	callTool(t, session, "history", map[string]any{"id": now.Beliefs[0].ID}, &hist)
	require.Equal(t, []string{nyc, miami}, statements(hist.Beliefs))

	require.Contains(t, h.toolError(t, session, "remember", map[string]any{"scope": scope,
		"messages": []map[string]string{{"role": "robot", "content": "hi"}}}), "messages[0].role")
	require.Contains(t, h.toolError(t, session, "forget", map[string]any{"scope": scope}), "exactly one")

	var forgot Forgotten
	callTool(t, session, "forget", map[string]any{"scope": scope, "match": "miami"}, &forgot)
	require.Equal(t, []int64{now.Beliefs[0].ID}, *forgot.Forgotten)
	var after Beliefs
	callTool(t, session, "recall", map[string]any{"scope": scope}, &after)
	require.Empty(t, after.Beliefs)

	// Over streamable HTTP at /mcp, with the bearer key.
	remote := h.mcpSession(t, key)
	tools, err = remote.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 8)
	var remembered Enqueued
	callTool(t, remote, "remember", rememberArgs(scope, "2026-04-01T09:00:00Z", "I live in New York City."), &remembered)
	require.Equal(t, 1, remembered.Enqueued)
	h.p.Drain(t)
	var again Beliefs
	callTool(t, remote, "recall", map[string]any{"scope": scope, "query": "Where does the user live?"}, &again)
	require.Equal(t, []string{nyc}, statements(again.Beliefs))

	// A key without the right, and no key at all.
	readOnly := h.mcpSession(t, h.key("tenant:a/", RightRead))
	require.Contains(t, h.toolError(t, readOnly, "remember", rememberArgs(scope, "2026-04-02T09:00:00Z", "Hi.")), CodeForbidden)
	require.Contains(t, h.toolError(t, readOnly, "forget", map[string]any{"scope": scope, "match": "x"}), "operate")
	_, err = h.connectMCP("")
	require.Error(t, err)
	r := h.fail("POST", MCPPath, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 401, CodeUnauthorized)
	require.NotEmpty(t, r.Header.Get("WWW-Authenticate"))
}

// TestServeMCPChecksTheKey: stdio serving refuses a bad key at start, and a key revoked
// mid-session on its next call.
func TestServeMCPChecksTheKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	_, serverT := mcp.NewInMemoryTransports()
	require.ErrorContains(t, h.api.ServeMCP(ctx, serverT, "credo_nope"), CodeUnauthorized)

	k, token, err := CreateKey(ctx, h.p.Schema.Pool, "desktop", []string{"tenant:a/"}, []Right{RightRead})
	require.NoError(t, err)
	clientT, serverT := mcp.NewInMemoryTransports()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.api.ServeMCP(runCtx, serverT, token) }()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, clientT, nil)
	require.NoError(t, err)
	defer session.Close()
	var bs Beliefs
	callTool(t, session, "recall", map[string]any{"scope": "tenant:a/x"}, &bs)
	_, err = RevokeKey(ctx, h.p.Schema.Pool, k.ID)
	require.NoError(t, err)
	require.Contains(t, h.toolError(t, session, "recall", map[string]any{"scope": "tenant:a/x"}), CodeUnauthorized)
	cancel()
	<-done
}

// A JSON-RPC batch would count a thousand calls as one request against the key's rate
// limit: batches are refused, and nothing of them runs.
func TestMCPRefusesBatches(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightWrite, RightRead)
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"scope":"tenant:a/u","messages":[{"role":"user","content":"I live in Oslo %d."}]}}}`
	var calls []string
	for i := range 50 {
		calls = append(calls, fmt.Sprintf(call, i, i))
	}
	r := h.fail("POST", MCPPath, key, " \n["+strings.Join(calls, ",")+"]", 400, CodeInvalidRequest)
	require.Contains(t, string(r.Body), "batches are not accepted")
	var episodes int
	require.NoError(t, h.p.Schema.Pool.QueryRow(context.Background(), "SELECT count(*) FROM episode").Scan(&episodes))
	require.Zero(t, episodes, "nothing of the batch ran")
	h.fail("POST", MCPPath, "", "["+calls[0]+"]", 401, CodeUnauthorized)
}
