package inspector_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/inspector"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

const (
	anaScope = "tenant:a/user:ana"
	bobScope = "tenant:b/user:bob"
	nyc      = "User lives in New York City"
	miami    = "User lives in Miami"
	berlin   = "User lives in Berlin"
	parrot   = "I have a parrot"
)

// harness is a running pipeline (River worker, fake LLM) with the API and the
// inspector on one real HTTP listener, as the worker serves them, and two tenants'
// memories: tenant:a's user moved from New York City to Miami, tenant:b's lives in
// Berlin; each tenant has a refused revision in its review queue and a failed episode.
type harness struct {
	t    *testing.T
	p    *pipelinetest.Pipeline
	http *httptest.Server
	logs *syncBuffer

	ana struct{ nyc, miami, item, failed int64 }
	bob struct{ berlin, item, failed int64 }
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	p := pipelinetest.New(t, nil)
	h := &harness{t: t, p: p, logs: &syncBuffer{}}
	p.LLM.OnPrompt("I live in New York City", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: nyc, Attribute: "location", ValidFrom: "2026-01-15"})})
	p.LLM.OnPrompt("I moved to Miami last month", llmtest.Reply{Content: quoting(pipelinetest.Answer(
		pipelinetest.Fact{Statement: miami, Attribute: "location", ValidFrom: "2026-02-20",
			Resolves: &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}}), miami, "moved to Miami")})
	p.LLM.OnPrompt("Still in Miami", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: miami, Attribute: "location",
			Resolves: &pipelinetest.Resolves{Index: 0, Action: "reinforce", Reason: "restated"}})})
	p.LLM.OnPrompt("I live in Berlin", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: berlin, Attribute: "location", ValidFrom: "2026-01-10"})})
	// The model server refuses this one: the episode fails at once.
	p.LLM.OnPrompt(parrot, llmtest.Reply{Status: http.StatusNotFound})

	p.Enqueue(t,
		pipelinetest.T(anaScope, "conv-0115", "2026-01-15T10:00:00Z", "I live in New York City."),
		pipelinetest.T(bobScope, "conv-b1", "2026-01-10T10:00:00Z", "I live in Berlin."))
	p.Drain(t)
	p.Enqueue(t, pipelinetest.T(anaScope, "conv-0320", "2026-03-20T14:00:00Z", "I moved to Miami last month."),
		pipelinetest.T(anaScope, "conv-0325", "2026-03-25T08:00:00Z", "Still in Miami, and loving it."))
	fails := p.Enqueue(t, pipelinetest.T(anaScope, "conv-0401", "2026-04-01T09:00:00Z", parrot+"."),
		pipelinetest.T(bobScope, "conv-b2", "2026-04-01T09:00:00Z", parrot+" too."))
	p.Drain(t)
	h.ana.failed, h.bob.failed = fails.EpisodeIDs[0], fails.EpisodeIDs[1]
	h.ana.nyc, h.ana.miami = h.beliefID(anaScope, nyc), h.beliefID(anaScope, miami)
	h.bob.berlin = h.beliefID(bobScope, berlin)
	h.ana.item = h.refusal(anaScope)
	h.bob.item = h.refusal(bobScope)

	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	v1, err := api.New(context.Background(), api.Config{Store: p.Store, Pool: p.Pool(), Jobs: p.Client, Embed: p.Provider, Chat: p.Provider,
		Addr: "127.0.0.1:0", RateLimit: -1, Logger: logger})
	require.NoError(t, err)
	ui, err := inspector.New(inspector.Config{Store: p.Store, Gate: v1, Jobs: p.Client, Embed: p.Provider, Logger: logger})
	require.NoError(t, err)
	mux := http.NewServeMux()
	v1.Mount(mux)
	ui.Mount(mux)
	h.http = httptest.NewServer(mux)
	t.Cleanup(h.http.Close)
	return h
}

func (h *harness) beliefID(scope, statement string) int64 {
	h.t.Helper()
	all, err := h.p.Store.All(context.Background(), scope)
	require.NoError(h.t, err)
	for _, b := range all {
		if b.Statement == statement {
			return b.ID
		}
	}
	require.FailNow(h.t, "no belief", "%q in %s", statement, scope)
	return 0
}

// refusal makes an authoritative belief in scope and an extraction's refused attempt
// to supersede it, and returns the review item.
func (h *harness) refusal(scope string) int64 {
	h.t.Helper()
	ctx := context.Background()
	fact := func(s string, origin memory.Origin) memory.Fact {
		return memory.Fact{Statement: s, Attribute: "plan", Confidence: 0.9, Origin: origin, Quote: s}
	}
	res, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator,
		Facts: []memory.Fact{fact("Account plan is Pro", memory.OriginAuthoritative)}})
	require.NoError(h.t, err)
	proposal := fact("Account plan is Free", memory.OriginUserStated)
	proposal.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction,
		Candidates: []int64{res.Facts[0].BeliefID}, Facts: []memory.Fact{proposal}})
	require.NoError(h.t, err)
	require.Equal(h.t, memory.OutcomeConflict, res.Facts[0].Kind)
	return res.Facts[0].ConflictID
}

// key makes a key for scopes (comma-separated) with rights and returns its token.
func (h *harness) key(scopes string, rights ...api.Right) string {
	h.t.Helper()
	_, token, err := api.CreateKey(context.Background(), h.p.Schema.Pool, "ops-"+strings.ReplaceAll(scopes, "/", ""),
		strings.Split(scopes, ","), rights)
	require.NoError(h.t, err)
	return token
}

// browser is a client with a cookie jar that does not follow redirects, so that every
// Location can be checked.
type browser struct {
	h      *harness
	c      *http.Client
	bearer string
	seen   []string // every URL requested and every Location answered
}

func (h *harness) browser() *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(h.t, err)
	return &browser{h: h, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type response struct {
	Status int
	Header http.Header
	Body   string
}

func (b *browser) do(req *http.Request) response {
	b.h.t.Helper()
	if b.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+b.bearer)
	}
	res, err := b.c.Do(req)
	require.NoError(b.h.t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(b.h.t, err)
	b.seen = append(b.seen, req.URL.String(), res.Header.Get("Location"))
	return response{Status: res.StatusCode, Header: res.Header, Body: string(body)}
}

func (b *browser) get(path string) response {
	b.h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.h.http.URL+path, nil)
	require.NoError(b.h.t, err)
	return b.do(req)
}

// post sends a form from origin ("" sends none; "self" is the inspector's own).
func (b *browser) post(path, origin string, form url.Values) response {
	b.h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.h.http.URL+path, strings.NewReader(form.Encode()))
	require.NoError(b.h.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin == "self" {
		origin = b.h.http.URL
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return b.do(req)
}

// cookie is the session id the browser holds for the inspector.
func (b *browser) cookie() string {
	b.h.t.Helper()
	u, err := url.Parse(b.h.http.URL + "/ui/")
	require.NoError(b.h.t, err)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "credo_session" {
			return c.Value
		}
	}
	return ""
}

// setCookie makes the browser hold session id for the inspector.
func (b *browser) setCookie(id string) {
	b.h.t.Helper()
	u, err := url.Parse(b.h.http.URL + "/ui/")
	require.NoError(b.h.t, err)
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "credo_session", Value: id, Path: "/ui/"}})
}

// login logs in through the form and checks where it leads.
func (b *browser) login(token string) {
	b.h.t.Helper()
	r := b.post("/ui/login", "self", url.Values{"key": {token}})
	require.Equal(b.h.t, http.StatusSeeOther, r.Status, r.Body)
	require.Equal(b.h.t, "/ui/", r.Header.Get("Location"))
}

// page gets path and requires a 200 page.
func (b *browser) page(path string) string {
	b.h.t.Helper()
	r := b.get(path)
	require.Equal(b.h.t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
	require.Equal(b.h.t, "text/html; charset=utf-8", r.Header.Get("Content-Type"))
	return r.Body
}

// syncBuffer is a log sink the server's goroutines write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// quoting is a scripted answer whose fact quotes the transcript's words rather than its
// own statement, as a model does.
func quoting(answer, statement, quote string) string {
	return strings.Replace(answer, `"quote":"`+statement+`"`, `"quote":"`+quote+`"`, 1)
}

func scopePath(scope string) string { return "/ui/scopes/" + url.PathEscape(scope) }

// The user's sister, as the harness's scopes learn of her: Austin, then Denver.
const (
	austin = "User's sister lives in Austin"
	denver = "User's sister lives in Denver"
)

// sister writes into scope that the user's sister, also called Sarah, lived in Austin
// and later moved to Denver, a supersession that names her by her alias, and returns
// the two beliefs.
func (h *harness) sister(scope string) (austinID, denverID int64) {
	h.t.Helper()
	ctx := context.Background()
	fact := func(statement, subject, validFrom string) memory.Fact {
		from, err := time.Parse(time.DateOnly, validFrom)
		require.NoError(h.t, err)
		return memory.Fact{Statement: statement, Subject: subject, Attribute: "home_city", Kind: memory.KindAttribute,
			Confidence: 0.9, Origin: memory.OriginUserStated, ValidFrom: &from, Quote: statement}
	}
	first := fact(austin, "user's sister", "2026-01-01")
	first.SubjectAliases = []string{"Sarah"}
	res, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction,
		Facts: []memory.Fact{first}})
	require.NoError(h.t, err)
	require.Equal(h.t, memory.OutcomeAccepted, res.Facts[0].Kind)
	austinID = res.Facts[0].BeliefID
	moved := fact(denver, "Sarah", "2026-04-01")
	moved.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction,
		Candidates: []int64{austinID}, Facts: []memory.Fact{moved}})
	require.NoError(h.t, err)
	require.Equal(h.t, memory.OutcomeSuperseded, res.Facts[0].Kind, "%+v", res.Facts[0])
	return austinID, res.Facts[0].BeliefID
}

func entityPath(scope, name string) string {
	return scopePath(scope) + "/entities/" + url.PathEscape(name)
}
