package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

// TestCrowdedScopeReads: ranked reads of a scope (the list, context, MCP recall) find its
// own beliefs while 40,000 identical beliefs of 2,000 other scopes lie as near to the
// query, and answer the same on the first request of a connection as on the tenth, when
// PostgreSQL has switched the prepared statement to a generic plan. The API runs on a
// single pooled connection, so every request reuses it.
func TestCrowdedScopeReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	model := h.p.Provider.EmbedModel()
	require.NoError(t, h.p.Store.EnsureEmbeddingModel(ctx, model, llmtest.DefaultDim))
	const statement = "User lives in Miami"
	var crowd []dbtest.Row
	for i := range 40_000 {
		crowd = append(crowd, dbtest.Row{Scope: fmt.Sprintf("user:%d", i%2000), Statement: statement, Attribute: "home_city",
			Vector: llmtest.Embed(statement, llmtest.DefaultDim)})
	}
	dbtest.InsertBeliefs(t, h.p.Schema.Pool, model, crowd)
	own := []dbtest.Row{{Scope: "user:victim", Statement: statement, Attribute: "home_city", Vector: llmtest.Embed(statement, llmtest.DefaultDim)}}
	for i := range 1200 {
		s := fmt.Sprintf("User collects stamp series %d", i)
		own = append(own, dbtest.Row{Scope: "user:victim", Statement: s, Attribute: fmt.Sprintf("collection_%d", i),
			Vector: llmtest.Embed(s, llmtest.DefaultDim)})
	}
	dbtest.InsertBeliefs(t, h.p.Schema.Pool, model, own)
	// With statistics, as in a live database.
	_, err := h.p.Schema.Pool.Exec(ctx, "ANALYZE belief")
	require.NoError(t, err)

	cfg, err := pgxpool.ParseConfig(h.p.Schema.URL)
	require.NoError(t, err)
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	srv, err := New(ctx, Config{Store: memory.NewStore(pool, nil), Pool: pool, Jobs: h.p.Client, Embed: h.p.Provider, Chat: h.p.Provider,
		Addr: "127.0.0.1:0", RateLimit: -1})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	key := h.key("user:victim", RightRead)
	h = &harness{t: t, p: h.p, api: srv, http: ts}
	scope := url.QueryEscape("user:victim")
	session := h.mcpSession(t, key)
	for i := range 10 {
		var got Beliefs
		h.ok("GET", "/v1/beliefs?scope="+scope+"&k=5&query="+url.QueryEscape(statement), key, nil, 200, &got)
		require.True(t, got.Ranked)
		require.Len(t, got.Beliefs, 5, "request %d", i)
		require.Equal(t, statement, got.Beliefs[0].Statement, "request %d", i)
		var c ContextAnswer
		h.ok("GET", "/v1/context?scope="+scope+"&query="+url.QueryEscape("Does the user live in Miami?"), key, nil, 200, &c)
		require.Contains(t, c.Context, "- "+statement+" (since ", "request %d", i)
		var recalled Beliefs
		callTool(t, session, "recall", map[string]any{"scope": "user:victim", "query": statement, "k": 5}, &recalled)
		require.Len(t, recalled.Beliefs, 5, "MCP recall %d", i)
		require.Equal(t, statement, recalled.Beliefs[0].Statement, "MCP recall %d", i)
	}
}
