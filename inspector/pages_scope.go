package inspector

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// scopeHead is what every page of a scope shows above its own content: the scope, its
// counts and the tabs to its other pages.
type scopeHead struct {
	Scope      string
	Active     string // beliefs, review, episodes or forget
	Status     memory.ScopeStatus
	OpenItems  int
	CanOperate bool
	CanPurge   bool
}

func (s *Server) scopeHead(ctx context.Context, p *api.Principal, scope, active string) (scopeHead, error) {
	h := scopeHead{Scope: scope, Active: active, Status: memory.ScopeStatus{Scope: scope},
		CanOperate: p.Can(api.RightOperate), CanPurge: p.Can(api.RightPurge)}
	if err := s.knownScope(ctx, p, scope); err != nil {
		return h, err
	}
	statuses, err := s.store.Scopes(ctx, scope) // the scope and those it prefixes
	if err != nil {
		return h, err
	}
	for _, st := range statuses {
		if st.Scope == scope {
			h.Status = st
		}
	}
	items, err := s.store.OpenItems(ctx, scope)
	if err != nil {
		return h, err
	}
	h.OpenItems = items[scope]
	return h, nil
}

// knownScope is nil when memory has held an episode or a belief of scope; otherwise the
// page is not found, naming the nearest scope p may see (memory.Store.KnownScope). In a
// memory where p sees no scope at all nothing else could have been meant: the page shows
// the scope, empty, as the CLI reads it.
func (s *Server) knownScope(ctx context.Context, p *api.Principal, scope string) error {
	err := s.store.KnownScope(ctx, memory.ScopeQuery{Scope: scope, Sees: p.Sees})
	if unknown, ok := errors.AsType[*memory.UnknownScopeError](err); ok {
		if unknown.Empty {
			return nil
		}
		return noScope(unknown)
	}
	return err
}

func scopeCrumbs(scope string) []crumb {
	return []crumb{{Label: "Scopes", URL: Prefix}, {Label: scope, URL: scopeURL(scope)}}
}

type scopeView struct {
	Head    scopeHead
	History bool
	AsOf    string
	Query   string
	// Mode says what the list is: current, history, or as of a date.
	Mode    string
	Beliefs []memory.Belief
	Total   int // before the search
	// Entities are whom the scope's beliefs are about, the user first; names are their
	// names by key.
	Entities []memory.Entity
	names    map[string]string
	// statements are the listed beliefs' statements by id, before the search: what
	// replaced a superseded row is named by them.
	statements map[int64]string
	// Audit is how precise the scope's revisions were.
	Audit *memory.Audit
	// Policy is the organisation's policy in force in the scope (nil: none), shown to a
	// key that may operate, as GET /v1/policies does.
	Policy *memory.Policy
}

// scopePage shows the scope's beliefs: current ones, with history the superseded and
// retracted ones too, or those true on a date; narrowed by a search.
func (s *Server) scopePage(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	scope := r.PathValue("scope")
	if err := checkScope(p, scope); err != nil {
		return err
	}
	q := r.URL.Query()
	if err := checkInput(transcript.CheckText("search", q.Get("q"), transcript.MaxQueryLen)); err != nil {
		return err
	}
	v := scopeView{History: q.Get("history") == "1", AsOf: strings.TrimSpace(q.Get("as_of")),
		Query: strings.TrimSpace(q.Get("q")), Mode: "current"}
	ctx := r.Context()
	var err error
	switch {
	case v.AsOf != "":
		at, perr := time.Parse(time.DateOnly, v.AsOf)
		if perr != nil {
			return badRequest("The date must look like 2026-03-20.")
		}
		v.Mode, v.History = "as-of", false
		v.Beliefs, err = s.store.AsOf(ctx, scope, at)
	case v.History:
		v.Mode = "history"
		v.Beliefs, err = s.store.All(ctx, scope)
	default:
		v.Beliefs, err = s.store.Current(ctx, scope)
	}
	if err != nil {
		return err
	}
	v.Total = len(v.Beliefs)
	v.statements = make(map[int64]string, len(v.Beliefs))
	for _, b := range v.Beliefs {
		if b.Status != memory.StatusForgotten { // a forgotten statement leaves every page
			v.statements[b.ID] = b.Statement
		}
	}
	v.Beliefs = search(v.Beliefs, v.Query)
	if v.Head, err = s.scopeHead(ctx, p, scope, "beliefs"); err != nil {
		return err
	}
	if v.Entities, err = s.ops.Entities(ctx, p, scope); err != nil {
		return lookupError(err)
	}
	v.names = make(map[string]string, len(v.Entities))
	for _, e := range v.Entities {
		v.names[e.Key] = e.Name
	}
	if v.Audit, err = s.store.Audit(ctx, memory.AuditQuery{Scope: scope}); err != nil {
		return err
	}
	if v.Head.CanOperate {
		if v.Policy, err = s.store.PolicyFor(ctx, scope); err != nil {
			return err
		}
	}
	return s.render(w, r, p, "scope", scope, scopeCrumbs(scope), v)
}

// EntityName is how the page names the entity of key: its name in the registry, or the
// key itself should the list lack it.
func (v scopeView) EntityName(key string) string {
	if name, ok := v.names[key]; ok {
		return name
	}
	return key
}

// Successor names belief id, which replaced a row: its statement when the list has it
// (history does), else its number.
func (v scopeView) Successor(id int64) string {
	if s, ok := v.statements[id]; ok {
		return s
	}
	return "belief " + strconv.FormatInt(id, 10)
}

// search keeps the beliefs whose statement, attribute, subject or quote contains q,
// ignoring case, and never a forgotten one (All lists them for audit; the pages, like
// the API, do not).
func search(bs []memory.Belief, q string) []memory.Belief {
	q = strings.ToLower(q)
	kept := bs[:0]
	for _, b := range bs {
		if b.Status == memory.StatusForgotten {
			continue
		}
		text := strings.ToLower(strings.Join([]string{b.Statement, b.Attribute, b.Subject, deref(b.Quote)}, "\n"))
		if q == "" || strings.Contains(text, q) {
			kept = append(kept, b)
		}
	}
	return kept
}
