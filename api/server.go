// Package api serves credo's memory to agents in any language: a JSON API under /v1,
// described by an OpenAPI document generated from its Go types (/v1/openapi.json), and
// a Model Context Protocol server, over streamable HTTP at /mcp and over stdio through
// `beliefs mcp`.
//
// Requests carry a bearer API key, credo_<prefix>_<secret>, bound to scope prefixes and
// rights (write, read, operate, purge). A request outside its key's scopes is refused
// before anything is read, with answers that do not tell whether the scope, belief or
// episode exists. Without any key the API serves every scope, but only where nothing
// but the local machine can reach it (a loopback address) or where another gate
// authenticates requests (API_BEHIND_GATE); elsewhere it refuses every request until a
// key exists.
package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
	"github.com/credohq/credo/recall"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transfer"
	"github.com/credohq/credo/webhook"
)

// Version is the version of the API's OpenAPI document.
const Version = "1.0.0"

// OpenAPIPath is where the OpenAPI document is served, without authentication.
const OpenAPIPath = "/v1/openapi.json"

// MCPPath is where the MCP server is served over streamable HTTP.
const MCPPath = "/mcp"

// Server is the HTTP API and the MCP server over one store.
type Server struct {
	store      *memory.Store
	pool       *pgxpool.Pool
	jobs       extract.Inserter
	redact     *redact.Redactor
	embed      llm.Embedder
	embedModel string
	reader     *recall.Reader
	ops        *operator.Operator
	importer   *transfer.Importer
	feed       *changes.Reader
	listener   *changes.Listener
	webhooks   *webhook.Webhooks
	log        *slog.Logger
	now        func() time.Time

	maxBody     int64
	bodyTimeout time.Duration
	maxRecords  int
	rate        rate.Limit
	burst       int
	// open: without keys, requests are served (loopback address, or behind a gate).
	open, gate bool
	csrf       *http.CrossOriginProtection

	mu       sync.Mutex
	limiters map[int64]*rate.Limiter

	api     huma.API
	mux     *http.ServeMux
	routes  []string // patterns registered on mux, in order
	schemas *mcp.SchemaCache

	docOnce sync.Once
	doc     map[string]any
}

// New returns a Server. With cfg.Addr set, it logs whether the API needs keys, serves
// every scope without them, or refuses every request until a key exists.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{
		store: cfg.Store, pool: cfg.Pool, jobs: cfg.Jobs, redact: cfg.Redact, embed: cfg.Embed, embedModel: cfg.EmbedModel, log: cfg.Logger, now: cfg.Now,
		maxBody: cfg.MaxBodyBytes, maxRecords: cfg.MaxRecords, rate: cfg.limit(), burst: cfg.RateBurst, bodyTimeout: cfg.BodyReadTimeout,
		open: cfg.BehindGate || IsLoopback(cfg.Addr), gate: cfg.BehindGate, csrf: http.NewCrossOriginProtection(),
		limiters: map[int64]*rate.Limiter{}, schemas: mcp.NewSchemaCache(), mux: http.NewServeMux(),
		feed: changes.NewReader(cfg.Pool), listener: changes.NewListener(cfg.Pool, cfg.Logger), webhooks: cfg.Webhooks,
		ops: operator.New(operator.Config{Store: cfg.Store, Embed: cfg.Embed, EmbedModel: cfg.EmbedModel, Now: cfg.Now, Redact: cfg.Redact}),
	}
	reader, err := recall.New(recall.Config{Store: s.store, Chat: cfg.Chat, Embed: cfg.Embed, EmbedModel: s.embedModel,
		Now: s.now, Observer: cfg.AskObserver, Logger: s.log, Redact: cfg.Redact})
	if err != nil {
		return nil, err
	}
	s.reader = reader
	if s.importer, err = transfer.NewImporter(transfer.Config{Store: s.store, Embed: cfg.Embed, EmbedModel: s.embedModel, Jobs: cfg.Jobs,
		Redact: s.redact, Observer: cfg.ImportObserver, Logger: s.log, Now: s.now}); err != nil {
		return nil, err
	}
	s.api = humago.New(recordingMux{s}, s.humaConfig())
	s.register()
	s.handle("/v1/", http.HandlerFunc(s.noRoute))
	s.handle(MCPPath, s.mcpHandler())
	if cfg.Addr != "" {
		if err := s.logMode(ctx, cfg); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Server) logMode(ctx context.Context, cfg Config) error {
	active, err := KeysRequired(ctx, s.pool)
	if err != nil {
		return err
	}
	switch {
	case active:
		s.log.InfoContext(ctx, "API and MCP served; requests need an API key", "addr", cfg.Addr)
	case cfg.BehindGate:
		s.log.WarnContext(ctx, "API and MCP served for every scope without a key: API_BEHIND_GATE says another gate authenticates requests", "addr", cfg.Addr)
	case s.open:
		s.log.WarnContext(ctx, "API and MCP served for every scope without a key, on loopback only, until a key is created", "addr", cfg.Addr)
	default:
		s.log.WarnContext(ctx, "API and MCP refuse every request: no API key exists and HTTP_ADDR is not a loopback address; "+
			"create a key with `beliefs keys create`, or set API_BEHIND_GATE=true if another gate authenticates requests", "addr", cfg.Addr)
	}
	return nil
}

// IsLoopback reports whether addr (host:port) listens on loopback only. An empty host
// listens on every interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isLoopbackHost reports whether a Host header names localhost or a loopback address.
func isLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ServeHTTP serves /v1/... and /mcp: the OpenAPI document to anyone, the rest to
// authenticated requests within their limits.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == OpenAPIPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		s.mux.ServeHTTP(w, r)
		return
	}
	s.guard(w, r)
}

// Mount serves the API on mux: /v1/ and /mcp.
func (s *Server) Mount(mux *http.ServeMux) {
	mux.Handle("/v1/", s)
	mux.Handle(MCPPath, s)
}

// guard authenticates the request, applies the key's rate limit and the body limit,
// and passes the request on with its principal.
// closeUnread ends the connection after the answer without waiting for the rest of the
// request's body: net/http would otherwise read it to reuse the connection, for as long
// as a slow sender takes.
func closeUnread(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

func (s *Server) guard(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > s.maxBody {
		writeError(w, s.bodyTooLarge())
		return
	}
	// A web page must not make a visitor's browser write to memory (cross-site request
	// forgery); browsers say where a request comes from, API clients send no such header.
	if err := s.csrf.Check(r); err != nil {
		writeError(w, newError(http.StatusForbidden, CodeForbidden, "cross-origin requests from browsers are refused"))
		return
	}
	p, err := s.authenticate(r)
	if err != nil {
		// Refused before its body is read: the connection closes rather than wait for a
		// body nobody will read (a slow sender would hold it).
		closeUnread(w)
		writeError(w, s.asError(r.Context(), err))
		return
	}
	if e := s.limit(p); e != nil {
		closeUnread(w)
		writeError(w, e)
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(s.bodyTimeout))
		body, err := io.ReadAll(io.LimitReader(r.Body, s.maxBody+1))
		_ = rc.SetReadDeadline(time.Time{})
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			closeUnread(w)
			writeError(w, newError(http.StatusRequestTimeout, CodeRequestTimeout, "request body was not sent in time"))
			return
		case err != nil:
			writeError(w, invalid("could not read the request body"))
			return
		case int64(len(body)) > s.maxBody:
			writeError(w, s.bodyTooLarge())
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	s.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
}

func (s *Server) bodyTooLarge() *Error {
	return newError(http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
		fmt.Sprintf("request body is over %d bytes", s.maxBody))
}

type principalKey struct{}

// principalFrom is the principal guard put in ctx. A context without one (a handler
// reached some other way) gets a principal allowed nothing.
func principalFrom(ctx context.Context) *Principal {
	if p, ok := ctx.Value(principalKey{}).(*Principal); ok {
		return p
	}
	return &Principal{}
}

const authHint = "send Authorization: Bearer credo_<prefix>_<secret> (keys are made with `beliefs keys create`)"

func unauthorized(message string) *Error {
	e := newError(http.StatusUnauthorized, CodeUnauthorized, message)
	e.headers = http.Header{"Www-Authenticate": {`Bearer realm="credo"`}}
	return e
}

// authenticate finds the request's principal: its key's, or, when no key exists and the
// address allows it, the open principal.
func (s *Server) authenticate(r *http.Request) (*Principal, error) {
	ctx := r.Context()
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
		token = strings.TrimSpace(token)
		if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
			return nil, unauthorized("the Authorization header is not a bearer API key; " + authHint)
		}
		p, err := Authenticate(ctx, s.pool, token)
		if errors.Is(err, ErrInvalidKey) {
			return nil, unauthorized("the API key is not valid, or was revoked")
		}
		return p, err
	}
	active, err := KeysRequired(ctx, s.pool)
	switch {
	case err != nil:
		return nil, err
	case active:
		return nil, unauthorized("an API key is required; " + authHint)
	case s.open && !s.gate && !isLoopbackHost(r.Host):
		// Served without a key on loopback: a request naming another host reached it
		// through a name that resolves to loopback (DNS rebinding), from a web page.
		return nil, newError(http.StatusForbidden, CodeForbidden,
			"without an API key, only requests to localhost or a loopback address are served")
	case s.open:
		return openPrincipal, nil
	}
	return nil, newError(http.StatusServiceUnavailable, CodeAPIDisabled,
		"the API is off: no API key exists and HTTP_ADDR is not a loopback address; create a key with `beliefs keys create`, "+
			"or set API_BEHIND_GATE=true if another gate authenticates requests")
}

// limit takes one token from the key's bucket, or answers 429 with the seconds until
// one is available.
func (s *Server) limit(p *Principal) *Error {
	if p.KeyID == 0 || s.rate == rate.Inf {
		return nil
	}
	s.mu.Lock()
	l := s.limiters[p.KeyID]
	if l == nil {
		l = rate.NewLimiter(s.rate, s.burst)
		s.limiters[p.KeyID] = l
	}
	s.mu.Unlock()
	now := time.Now()
	res := l.ReserveN(now, 1)
	if !res.OK() {
		return rateLimited(time.Second)
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return rateLimited(d)
	}
	return nil
}

func rateLimited(wait time.Duration) *Error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	e := newError(http.StatusTooManyRequests, CodeRateLimited,
		fmt.Sprintf("too many requests for this API key; retry in %d s", secs))
	e.headers = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return e
}

// asError is err as an Error: itself, or an internal error, logged.
func (s *Server) asError(ctx context.Context, err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	_ = s.internal(ctx, err)
	return internalError()
}

// noRoute answers paths under /v1/ that no operation serves: 405 when another method
// is served there, else 404.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/v1/" && pattern != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		e := newError(http.StatusMethodNotAllowed, CodeMethodNotAllowed, r.Method+" is not served here")
		e.headers = http.Header{"Allow": {strings.Join(allowed, ", ")}}
		writeError(w, e)
		return
	}
	writeError(w, newError(http.StatusNotFound, CodeNoRoute, "no such endpoint; the API is described at "+OpenAPIPath))
}

// recordingMux registers huma's operations on the server's mux and remembers them, so
// that tests can hold the served routes against the OpenAPI document.
type recordingMux struct{ s *Server }

func (m recordingMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.s.handle(pattern, http.HandlerFunc(h))
}

func (m recordingMux) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.s.mux.ServeHTTP(w, r) }

func (s *Server) handle(pattern string, h http.Handler) {
	s.routes = append(s.routes, pattern)
	s.mux.Handle(pattern, h)
}

// mcpHandler serves MCP over streamable HTTP, statelessly: each request gets a server
// bound to its own principal, so no session outlives or outreaches its key. The SDK's
// own DNS rebinding check is off: guard makes it where it matters, for requests served
// without a key, and the SDK's would refuse keyed requests through a local proxy that
// keeps the Host header.
func (s *Server) mcpHandler() http.Handler {
	return s.noBatches(mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		p := principalFrom(r.Context())
		return s.MCPServer(func(context.Context) (*Principal, error) { return p, nil })
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log, MaxRequestBodyBytes: s.maxBody + 1,
		DisableLocalhostProtection: true}))
}
