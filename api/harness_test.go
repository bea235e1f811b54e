package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

const (
	nyc   = "User lives in New York City"
	miami = "User lives in Miami"
)

// harness is a running pipeline (River worker, fake LLM) with the API over real HTTP.
type harness struct {
	t    *testing.T
	p    *pipelinetest.Pipeline
	api  *Server
	http *httptest.Server

	mu     sync.Mutex
	bodies []string // every response body, for leak checks
}

type harnessOpt func(*Config)

func newHarness(t *testing.T, opts ...harnessOpt) *harness {
	t.Helper()
	p := pipelinetest.New(t, nil)
	// The NYC/Miami story, as extract's end-to-end test scripts it.
	p.LLM.OnPrompt("I live in New York City", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: nyc, Attribute: "location", ValidFrom: "2026-01-15"})})
	p.LLM.OnPrompt("I moved to Miami last month", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: miami, Attribute: "location", ValidFrom: "2026-02-20",
			Resolves: &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}})})
	cfg := Config{Store: p.Store, Pool: p.Pool(), Jobs: p.Client, Embed: p.Provider, Chat: p.Provider, Addr: "127.0.0.1:0", RateLimit: -1}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(context.Background(), cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &harness{t: t, p: p, api: srv, http: ts}
}

// key makes a key and returns its token.
func (h *harness) key(scopes string, rights ...Right) string {
	h.t.Helper()
	_, token, err := CreateKey(context.Background(), h.p.Schema.Pool, "test", strings.Split(scopes, ","), rights)
	require.NoError(h.t, err)
	return token
}

var allRights = []Right{RightWrite, RightRead, RightOperate, RightPurge}

// response is one HTTP answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) String() string { return strconv.Itoa(r.Status) + " " + string(r.Body) }

// code is the error code of an error answer, checking its shape on the way: one
// "error" object with a code and a message, and nothing else.
func (r response) code(t *testing.T) string {
	t.Helper()
	var e struct {
		Error struct {
			Code    string   `json:"code"`
			Message string   `json:"message"`
			Details []string `json:"details"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), "error shape: %s", r)
	require.NotEmpty(t, e.Error.Code, "error code: %s", r)
	require.NotEmpty(t, e.Error.Message, "error message: %s", r)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	return e.Error.Code
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "%s", r)
}

// do sends a request; body is sent as is when a string or []byte, else as JSON.
func (h *harness) do(method, path, token string, body any) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		require.NoError(h.t, err)
		rd = bytes.NewReader(buf)
	}
	contentType := ""
	if body != nil {
		contentType = "application/json"
	}
	return h.doAs(method, path, token, contentType, rd)
}

// doAs sends the body rd (nil: none) as contentType.
func (h *harness) doAs(method, path, token, contentType string, rd io.Reader) response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.http.URL+path, rd)
	require.NoError(h.t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := h.http.Client().Do(req)
	require.NoError(h.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(h.t, err)
	h.mu.Lock()
	h.bodies = append(h.bodies, string(b))
	h.mu.Unlock()
	return response{Status: res.StatusCode, Header: res.Header, Body: b}
}

func (h *harness) ok(method, path, token string, body any, status int, v any) {
	h.t.Helper()
	r := h.do(method, path, token, body)
	require.Equal(h.t, status, r.Status, "%s %s: %s", method, path, r)
	if v != nil {
		r.decode(h.t, v)
	}
}

// fail sends a request that must fail with status and code.
func (h *harness) fail(method, path, token string, body any, status int, code string) response {
	h.t.Helper()
	r := h.do(method, path, token, body)
	require.Equal(h.t, status, r.Status, "%s %s: %s", method, path, r)
	require.Equal(h.t, code, r.code(h.t), "%s %s: %s", method, path, r)
	return r
}

// record is one transcript record as JSON.
func record(scope, id, occurredAt string, userSays ...string) map[string]any {
	var msgs []map[string]string
	for _, s := range userSays {
		msgs = append(msgs, map[string]string{"role": "user", "content": s}, map[string]string{"role": "assistant", "content": "Noted."})
	}
	return map[string]any{"scope": scope, "id": id, "occurred_at": occurredAt, "messages": msgs}
}

func statements(bs []Belief) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.Statement)
	}
	return out
}

func fact(statement, attribute string) memory.Fact {
	return memory.Fact{Statement: statement, Attribute: attribute, Confidence: 0.9, Origin: memory.OriginUserStated, Quote: statement}
}
