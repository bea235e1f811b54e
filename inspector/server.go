// Package inspector is credo's web UI: server-rendered pages under /ui/ where an
// operator sees memory change over time (scopes, beliefs and their supersession
// chains, the review queue, episodes, how precise revisions were) and acts on it
// (review decisions, retries, reverts, forget and purge, each behind a confirmation).
//
// It is served on the API's listener with the API's keys and rules: a browser logs in
// with a key, kept in an HttpOnly, SameSite=Strict cookie; a bearer header works too;
// without any key, the API's keyless mode (loopback, or behind a gate) applies. A key
// sees exactly what it sees in the API. Every POST must come from a page of the same
// origin, and a strict Content-Security-Policy allows no script at all.
package inspector

import (
	"context"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
)

// Prefix is the path the inspector is served under.
const Prefix = "/ui/"

// maxForm bounds a form's body: a key, a note, a scope name.
const maxForm = 64 << 10

// csp allows the page's own styles, images and forms, and no script at all.
const csp = "default-src 'self'; script-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// Gate admits requests by the API's rules, and keeps the sessions of browsers that
// logged in; *api.Server is one.
type Gate interface {
	Admit(r *http.Request) (*api.Principal, error)
	AdmitSession(r *http.Request, token string) (*api.Principal, error)
	StartSession(ctx context.Context, p *api.Principal, ttl time.Duration) (*api.Session, error)
	EndSession(ctx context.Context, token string) error
}

// Server serves the inspector's pages.
type Server struct {
	store *memory.Store
	gate  Gate
	jobs  extract.Inserter
	ops   *operator.Operator
	log   *slog.Logger
	now   func() time.Time
	pages map[string]*template.Template
	csrf  *http.CrossOriginProtection
	mux   *http.ServeMux
	// secure and sessionTTL are Config.SecureCookies and SessionTTL.
	secure     bool
	sessionTTL time.Duration
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{store: cfg.Store, gate: cfg.Gate, jobs: cfg.Jobs, log: cfg.Logger, now: cfg.Now, pages: pages,
		csrf: http.NewCrossOriginProtection(), mux: http.NewServeMux(),
		secure: cfg.SecureCookies, sessionTTL: cfg.SessionTTL,
		ops: operator.New(operator.Config{Store: cfg.Store, Embed: cfg.Embed, EmbedModel: cfg.EmbedModel, Now: cfg.Now, Redact: cfg.Redact})}
	s.routes()
	return s, nil
}

// Mount serves the inspector on mux under Prefix.
func (s *Server) Mount(mux *http.ServeMux) { mux.Handle(Prefix, s) }

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /ui/static/{file}", s.static)
	m.HandleFunc("GET /ui/login", s.loginForm)
	m.HandleFunc("POST /ui/login", s.login)
	m.HandleFunc("POST /ui/logout", s.logout)
	m.Handle("GET /ui/{$}", s.get(api.RightRead, s.scopesPage))
	m.Handle("GET /ui/scopes/{scope}", s.get(api.RightRead, s.scopePage))
	m.Handle("GET /ui/scopes/{scope}/review", s.get(api.RightRead, s.reviewPage))
	m.Handle("GET /ui/scopes/{scope}/episodes", s.get(api.RightRead, s.episodesPage))
	m.Handle("GET /ui/scopes/{scope}/forget", s.get(api.RightRead, s.confirmScope))
	m.Handle("GET /ui/scopes/{scope}/entities/{name}", s.get(api.RightRead, s.entityPage))
	m.Handle("GET /ui/scopes/{scope}/entities/{name}/forget", s.get(api.RightRead, s.confirmEntity))
	m.Handle("POST /ui/scopes/{scope}/forget", s.post("", s.forgetScope))
	m.Handle("POST /ui/scopes/{scope}/entities/{name}/forget", s.post("", s.forgetEntity))
	m.Handle("GET /ui/beliefs/{id}", s.get(api.RightRead, s.beliefPage))
	m.Handle("GET /ui/beliefs/{id}/forget", s.get(api.RightRead, s.confirmBelief))
	m.Handle("POST /ui/beliefs/{id}/forget", s.post("", s.forgetBelief))
	m.Handle("POST /ui/review/{id}", s.post(api.RightOperate, s.resolve))
	m.Handle("GET /ui/events/{id}/revert", s.get(api.RightRead, s.confirmRevert))
	m.Handle("POST /ui/events/{id}/revert", s.post(api.RightOperate, s.revert))
	m.Handle("GET /ui/episodes/{id}", s.get(api.RightRead, s.episodePage))
	m.Handle("POST /ui/episodes/{id}/retry", s.post(api.RightOperate, s.retry))
	m.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, nil, notFound())
	})
}

// ServeHTTP sets the headers every answer carries, then serves the page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	// Pages show memory: no cache keeps them after logout. Assets override it.
	h.Set("Cache-Control", "no-store")
	s.mux.ServeHTTP(w, r)
}
