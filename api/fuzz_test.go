package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/prompts"
)

// fuzzServer is an API over a pipeline, with a key of every right on every scope. Its
// model gives a valid answer to every question the API may put, so a fuzzed request that
// reaches the model (an ask of a scope an earlier input filled) explores the API's code
// after it, and a 502 is the API's fault; read_test covers a model that fails.
func fuzzServer(f *testing.F) (*httptest.Server, string) {
	p := pipelinetest.New(f, nil)
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		switch req.SchemaName {
		case prompts.AnswerSchemaName:
			return llmtest.Reply{Content: `{"reasoning":"","answer":"I do not know.","citations":[]}`}
		case prompts.ConsolidationSchemaName:
			return llmtest.Reply{Content: `{"reasoning":"","resolutions":[]}`}
		case prompts.ReviewSchemaName:
			return llmtest.Reply{Content: `{"reasoning":"","reviews":[]}`}
		}
		return llmtest.Reply{Content: llmtest.DefaultContent}
	})
	srv, err := New(context.Background(), Config{Store: p.Store, Pool: p.Pool(), Jobs: p.Client, Embed: p.Provider, Chat: p.Provider,
		Addr: "127.0.0.1:0", RateLimit: -1})
	require.NoError(f, err)
	ts := httptest.NewServer(srv)
	f.Cleanup(ts.Close)
	_, key, err := CreateKey(context.Background(), p.Schema.Pool, "fuzz", []string{"*"}, allRights)
	require.NoError(f, err)
	return ts, key
}

// FuzzAPI: whatever method, path and body, the API answers below 500. Seeded with real
// requests of every operation; CI runs it briefly with -fuzz.
func FuzzAPI(f *testing.F) {
	ts, key := fuzzServer(f)
	for _, seed := range []struct{ method, path, body string }{
		{"POST", "/v1/transcripts", `{"scope":"u","messages":[{"role":"user","content":"I live in Oslo."}]}`},
		{"GET", "/v1/beliefs?scope=u&query=where&k=3&inherit=true", ""},
		{"GET", "/v1/beliefs?scope=u&as_of=2026-01-01", ""},
		{"GET", "/v1/context?scope=u&query=x&budget=100", ""},
		{"POST", "/v1/beliefs", `{"scope":"u","statement":"User likes tea","attribute":"drink"}`},
		{"POST", "/v1/ask", `{"scope":"u","question":"Where?"}`}, // of a scope that holds a belief: the model answers
		{"POST", "/v1/beliefs/1/correct", `{"retract":true}`},
		{"GET", "/v1/beliefs/1/history", ""},
		{"GET", "/v1/events?scope=u&limit=5", ""},
		{"GET", "/v1/conflicts?scope=u&all=true", ""},
		{"POST", "/v1/conflicts/1/resolve", `{"action":"dismiss","note":"x"}`},
		{"POST", "/v1/forget", `{"scope":"u","match":"tea"}`},
		{"POST", "/v1/forget", `{"scope":"u","entity":"my sister"}`},
		{"POST", "/v1/forget", `{"scope_prefix":"u","all":true,"purge":true}`},
		{"GET", "/v1/entities?scope=u", ""},
		{"GET", "/v1/entities/user%27s%20sister?scope=u&history=true", ""},
		{"POST", "/v1/entities/merge", `{"scope":"u","into":"user","other":"Sarah","note":"x"}`},
		{"GET", "/v1/episodes/1", ""},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"scope":"u"}}}`},
	} {
		f.Add(seed.method, seed.path, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, method, path string, body []byte) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(method, " \t\r\n") || method == "" {
			return // not an HTTP request line at all
		}
		// A GET of /mcp may open an event stream that stays open: bounded, not a failure.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := ts.Client().Do(req)
		if err != nil {
			return // the client refused to send it
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
		require.Less(t, res.StatusCode, 500, "%s %s %q: %d %s", method, path, body, res.StatusCode, out)
	})
}

// FuzzMCPTools: whatever a tool's arguments, a call answers below 500 (a tool error at
// worst) and nothing panics.
func FuzzMCPTools(f *testing.F) {
	ts, key := fuzzServer(f)
	for _, seed := range []struct{ tool, args string }{
		{"remember", `{"scope":"u","messages":[{"role":"user","content":"I live in Oslo."}]}`},
		{"recall", `{"scope":"u","query":"where","k":3,"history":true,"inherit":true}`},
		{"recall", `{"scope":"u","as_of":"2026-01-01"}`},
		{"history", `{"id":1}`},
		{"forget", `{"scope":"u","match":"oslo"}`},
		{"context", `{"scope":"u","query":"x","k":2}`},
		{"ask", `{"scope":"u","question":"Where?"}`},
		{"entities", `{"scope":"u"}`},
		{"entity", `{"scope":"u","name":"Sarah","history":true}`},
	} {
		f.Add(seed.tool, []byte(seed.args))
	}
	f.Fuzz(func(t *testing.T, tool string, args []byte) {
		name, err := json.Marshal(tool)
		if err != nil || !json.Valid(args) {
			return // not a JSON-RPC call: FuzzAPI covers bodies at large
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + string(name) + `,"arguments":` + string(args) + `}}`
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+MCPPath, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := ts.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		out, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
		require.Less(t, res.StatusCode, 500, "%s %s: %d %s", tool, args, res.StatusCode, out)
	})
}
