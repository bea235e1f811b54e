package api

import (
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
)

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.MaxBodyBytes = 2048 })
	key := h.key("tenant:a/", allRights...)
	big := record("tenant:a/user:1", "big", "2026-01-15T10:00:00Z", strings.Repeat("I live in New York City. ", 100))
	r := h.fail("POST", "/v1/transcripts", key, big, 413, CodeBodyTooLarge)
	require.Contains(t, string(r.Body), "2048")
	h.fail("POST", "/v1/forget", key, map[string]any{"scope": "tenant:a/x", "match": strings.Repeat("x", 3000)}, 413, CodeBodyTooLarge)
	h.fail("POST", MCPPath, key, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`+strings.Repeat("x", 3000)+`"}}`, 413, CodeBodyTooLarge)

	// Without a Content-Length (chunked), the limit holds while reading.
	req, err := http.NewRequest(http.MethodPost, h.http.URL+"/v1/transcripts", io.MultiReader(strings.NewReader(`[`), strings.NewReader(strings.Repeat(" ", 4000)+`]`)))
	require.NoError(t, err)
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := h.http.Client().Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, 413, res.StatusCode)
	require.Equal(t, CodeBodyTooLarge, response{Status: res.StatusCode, Header: res.Header, Body: body}.code(t))

	// Just under the limit is read.
	h.fail("POST", "/v1/transcripts", key, `[`+strings.Repeat(" ", 2000)+`]`, 400, CodeInvalidRequest)
}

func TestRecordLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.MaxRecords = 2 })
	key := h.key("tenant:a/", allRights...)
	rec := func(i int) map[string]any {
		return record("tenant:a/user:1", "r"+strconv.Itoa(i), "2026-01-15T10:00:00Z", "Message "+strconv.Itoa(i)+".")
	}
	r := h.fail("POST", "/v1/transcripts", key, []any{rec(1), rec(2), rec(3)}, 413, CodeTooManyRecords)
	require.Contains(t, string(r.Body), "the limit is 2")
	// JSON lines count as well.
	var lines string
	var linesSb58 strings.Builder
	for i := range 3 {
		b := `{"scope": "tenant:a/user:1", "messages": [{"role": "user", "content": "Line ` + strconv.Itoa(i) + `"}]}`
		linesSb58.WriteString(b + "\n")
	}
	lines += linesSb58.String()
	h.fail("POST", "/v1/transcripts", key, lines, 413, CodeTooManyRecords)
	var n int
	require.NoError(t, h.p.Schema.Pool.QueryRow(context.Background(), "SELECT count(*) FROM episode").Scan(&n))
	require.Zero(t, n)

	var ok Enqueued
	h.ok("POST", "/v1/transcripts", key, []any{rec(1), rec(2)}, 202, &ok)
	require.Equal(t, 2, ok.Enqueued)
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.RateLimit, c.RateBurst = 0.1, 3 })
	a := h.key("tenant:a/", RightRead)
	b := h.key("tenant:a/", RightRead)
	path := "/v1/beliefs?scope=tenant:a/x"
	for range 3 {
		h.ok("GET", path, a, nil, 200, nil)
	}
	r := h.fail("GET", path, a, nil, 429, CodeRateLimited)
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, retry >= 1 && retry <= 10, "Retry-After %d", retry)
	// Per key: another key is not held back, and a refused request took no token.
	h.ok("GET", path, b, nil, 200, nil)
	h.fail("GET", path, a, nil, 429, CodeRateLimited)
	// MCP counts against the same bucket.
	h.fail("POST", MCPPath, a, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 429, CodeRateLimited)
}

func TestModes(t *testing.T) {
	t.Parallel()
	path := "/v1/beliefs?scope=anything"

	// On loopback, without keys: every scope, no key needed; a key once one exists.
	h := newHarness(t)
	h.ok("GET", path, "", nil, 200, nil)
	h.ok("POST", "/v1/beliefs", "", map[string]any{"scope": "anything", "statement": "User likes tea", "attribute": "drink"}, 200, nil)
	key := h.key("tenant:a/", RightRead)
	h.fail("GET", path, "", nil, 401, CodeUnauthorized)
	h.fail("GET", path, key, nil, 403, CodeForbidden)
	// Revoking every key does not reopen the keyless mode: that would hand every right,
	// a whole-scope purge included, to whoever reaches the address.
	keys, err := ListKeys(context.Background(), h.p.Schema.Pool)
	require.NoError(t, err)
	for _, k := range keys {
		_, err := RevokeKey(context.Background(), h.p.Schema.Pool, k.ID)
		require.NoError(t, err)
	}
	h.fail("GET", path, "", nil, 401, CodeUnauthorized)
	h.fail("POST", "/v1/forget", "", map[string]any{"scope": "anything", "all": true, "purge": true}, 401, CodeUnauthorized)

	// Without a key, a request naming another host is one a web page made through DNS
	// rebinding; and no browser request from another site may write, key or not.
	open0 := newHarness(t)
	open0.ok("GET", path, "", nil, 200, nil)
	for _, c := range []struct {
		host, site string
		status     int
	}{
		{"evil.example:9464", "", 403}, {"localhost:9464", "", 200}, {"[::1]:9464", "", 200}, {"127.0.0.1", "", 200},
		{"", "cross-site", 403}, {"", "same-origin", 200},
	} {
		req, err := http.NewRequest(http.MethodPost, open0.http.URL+"/v1/beliefs", strings.NewReader(`{"scope": "s", "statement": "User likes tea", "attribute": "drink"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if c.host != "" {
			req.Host = c.host
		}
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
		}
		res, err := open0.http.Client().Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, c.status, res.StatusCode, "%+v", c)
	}

	// Not on loopback, without keys: nothing is served until a key exists.
	open := newHarness(t, func(c *Config) { c.Addr = ":9464" })
	r := open.fail("GET", path, "", nil, 503, CodeAPIDisabled)
	require.Contains(t, string(r.Body), "API_BEHIND_GATE")
	open.fail("POST", MCPPath, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 503, CodeAPIDisabled)
	open.ok("GET", OpenAPIPath, "", nil, 200, nil)
	k := open.key("anything", RightRead)
	open.ok("GET", path, k, nil, 200, nil)
	open.fail("GET", path, "", nil, 401, CodeUnauthorized)

	// Behind a gate: every scope without a key.
	gated := newHarness(t, func(c *Config) { c.Addr, c.BehindGate = "0.0.0.0:9464", true })
	gated.ok("GET", path, "", nil, 200, nil)

	for addr, want := range map[string]bool{
		"127.0.0.1:9464": true, "localhost:9464": true, "[::1]:9464": true, "127.1.2.3:80": true,
		":9464": false, "0.0.0.0:9464": false, "[::]:9464": false, "10.0.0.5:9464": false, "example.com:80": false, "": false, "bad": false,
	} {
		require.Equal(t, want, IsLoopback(addr), addr)
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	db := h.p.Schema.Pool
	k, token, err := CreateKey(ctx, db, " agent ", []string{" tenant:a/ ", "tenant:b/", "tenant:a/", ""}, []Right{"READ", "write", "read"})
	require.NoError(t, err)
	require.Equal(t, "agent", k.Name)
	require.Equal(t, []string{"tenant:a/", "tenant:b/"}, k.Scopes)
	require.Equal(t, []Right{RightWrite, RightRead}, k.Rights)
	require.Regexp(t, `^credo_[0-9a-f]{12}_[0-9a-f]{64}$`, token)
	require.Contains(t, token, k.Prefix)

	var stored string
	require.NoError(t, db.QueryRow(ctx, "SELECT secret_hash FROM api_key WHERE id = $1", k.ID).Scan(&stored))
	require.NotContains(t, stored, token[len(token)-64:], "only a hash of the secret is stored")
	require.Len(t, stored, 64)

	p, err := Authenticate(ctx, db, token)
	require.NoError(t, err)
	require.Equal(t, k.ID, p.KeyID)
	require.True(t, p.Sees("tenant:b/x"))
	require.False(t, p.Sees("tenant:c/x"))
	require.False(t, p.Can(RightOperate))
	for _, bad := range []string{"", token + "0", token[:len(token)-1] + "x", strings.Replace(token, "credo_", "credo-", 1),
		"credo_" + k.Prefix + "_" + strings.Repeat("0", 64)} {
		_, err := Authenticate(ctx, db, bad)
		require.ErrorIs(t, err, ErrInvalidKey, bad)
	}

	for _, c := range []struct {
		name   string
		scopes []string
		rights []Right
	}{
		{"", []string{"a/"}, []Right{RightRead}},
		{"x", nil, []Right{RightRead}},
		{"x", []string{" "}, []Right{RightRead}},
		{"x", []string{"a/"}, nil},
		{"x", []string{"a/"}, []Right{"admin"}},
		{"x", []string{"a\n/"}, []Right{RightRead}},
	} {
		_, _, err := CreateKey(ctx, db, c.name, c.scopes, c.rights)
		require.ErrorIs(t, err, ErrKeySpec, "%+v", c)
	}

	all, _, err := CreateKey(ctx, db, "admin", []string{AllScopes}, Rights)
	require.NoError(t, err)
	keys, err := ListKeys(ctx, db)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	revoked, err := RevokeKey(ctx, db, all.ID)
	require.NoError(t, err)
	require.NotNil(t, revoked.RevokedAt)
	again, err := RevokeKey(ctx, db, all.ID)
	require.NoError(t, err)
	require.Equal(t, revoked.RevokedAt, again.RevokedAt, "revoking twice keeps the first time")
	_, err = RevokeKey(ctx, db, 999999)
	require.ErrorIs(t, err, ErrKeyNotFound)
	active, err := HasActiveKey(ctx, db)
	require.NoError(t, err)
	require.True(t, active)
}

// TestSlowHandlerIsNotCut: a request whose handler outlasts huma's body read timeout (5
// s) is not canceled by a read deadline left on the connection.
func TestSlowHandlerIsNotCut(t *testing.T) {
	t.Parallel()
	p := pipelinetest.New(t, &pipelinetest.Options{LLMOptions: []llmtest.Option{llmtest.WithLatency(6 * time.Second)}})
	srv, err := New(context.Background(), Config{Store: p.Store, Pool: p.Pool(), Jobs: p.Client, Embed: p.Provider, Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	h := &harness{t: t, p: p, api: srv, http: ts}
	h.ok("POST", "/v1/beliefs", "", map[string]any{"scope": "s", "statement": "User likes tea", "attribute": "drink"}, 200, nil)
}

func TestSettings(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) (*config.Config, error) {
		fs := flag.NewFlagSet("worker", flag.ContinueOnError)
		return config.Load(fs, config.GroupWorker, func(k string) string { return env[k] })
	}
	cfg, err := load(nil)
	require.NoError(t, err)
	c := Config{}.Settings(cfg)
	require.Equal(t, Config{Addr: ":9464", MaxBodyBytes: DefaultMaxBodyBytes, MaxRecords: DefaultMaxRecords,
		RateLimit: DefaultRateLimit, RateBurst: DefaultRateBurst}, c)

	cfg, err = load(map[string]string{"API_BEHIND_GATE": "true", "API_MAX_BODY_BYTES": "512KiB", "API_MAX_RECORDS": "10",
		"API_RATE_LIMIT": "0", "API_RATE_BURST": "5", "HTTP_ADDR": "127.0.0.1:8080"})
	require.NoError(t, err)
	c = Config{}.Settings(cfg)
	require.Equal(t, Config{Addr: "127.0.0.1:8080", BehindGate: true, MaxBodyBytes: 512 << 10, MaxRecords: 10, RateLimit: -1, RateBurst: 5}, c)

	for env, value := range map[string]string{"API_BEHIND_GATE": "perhaps", "API_MAX_BODY_BYTES": "4MB", "API_MAX_RECORDS": "0",
		"API_RATE_LIMIT": "-1", "API_RATE_BURST": "0"} {
		_, err := load(map[string]string{env: value})
		require.ErrorContains(t, err, env)
	}
	cfg, err = load(map[string]string{"API_MAX_BODY_BYTES": "1048576"})
	require.NoError(t, err)
	require.EqualValues(t, 1<<20, cfg.APIMaxBodyBytes)
}
