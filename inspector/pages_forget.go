package inspector

import (
	"context"
	"errors"
	"net/http"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/memory"
)

// maxNamed is how many beliefs a confirmation names before it counts the rest.
const maxNamed = 50

// forgetRight is the right a forget needs: purge to erase for good, else operate.
func forgetRight(purge bool) api.Right {
	if purge {
		return api.RightPurge
	}
	return api.RightOperate
}

type confirmView struct {
	Purge bool
	// Belief is the one belief to go, or nil for an entity or a whole scope.
	Belief *memory.Belief
	// Entity is the entity whose beliefs go, or nil for a belief or a whole scope.
	Entity *memory.Entity
	Scope  string
	// Beliefs are what a forget of an entity or a scope takes (the first maxNamed), More
	// the rest.
	Beliefs  []memory.Belief
	More     int
	Episodes int
	// EpisodesFull: there are at least that many.
	EpisodesFull bool
	Action       string
	Back         string
}

// confirmBelief asks before forgetting (or, with purge=1, erasing) one belief, naming it.
func (s *Server) confirmBelief(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	purge := r.URL.Query().Get("purge") == "1"
	if !p.Can(forgetRight(purge)) {
		return forbiddenRight(forgetRight(purge))
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	b, err := s.visibleBelief(r.Context(), p, id)
	if err != nil {
		return err
	}
	v := confirmView{Purge: purge, Belief: b, Scope: b.Scope, Action: r.URL.Path, Back: Prefix + "beliefs/" + itoa(id)}
	title := "Forget belief " + itoa(id) + "?"
	if purge {
		title = "Erase belief " + itoa(id) + "?"
	}
	return s.render(w, r, p, "confirm", title, append(scopeCrumbs(b.Scope), crumb{Label: title}), v)
}

// forgetBelief forgets or erases one belief, then shows its scope without it.
func (s *Server) forgetBelief(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	purge := r.PostForm.Get("purge") == "1"
	if !p.Can(forgetRight(purge)) {
		return forbiddenRight(forgetRight(purge))
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	b, err := s.ops.ForgetBelief(r.Context(), p, id, purge)
	if err != nil {
		return lookupError(err)
	}
	what := "forgotten"
	if purge {
		what = "purged"
	}
	http.Redirect(w, r, done(scopeURL(b.Scope), what, id), http.StatusSeeOther) //nolint:gosec // G710: an own path, its scope escaped
	return nil
}

// confirmScope asks before forgetting every belief of a scope (or, with purge=1,
// erasing the scope), naming its beliefs and counting its episodes.
func (s *Server) confirmScope(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	purge := r.URL.Query().Get("purge") == "1"
	if !p.Can(forgetRight(purge)) {
		return forbiddenRight(forgetRight(purge))
	}
	scope := r.PathValue("scope")
	if err := checkScope(p, scope); err != nil {
		return err
	}
	if err := s.knownScope(r.Context(), p, scope); err != nil {
		return err
	}
	v := confirmView{Purge: purge, Scope: scope, Action: r.URL.Path, Back: scopeURL(scope)}
	if err := s.whatGoes(r.Context(), &v); err != nil {
		return err
	}
	title := "Forget every belief of " + scope + "?"
	if purge {
		title = "Erase " + scope + "?"
	}
	return s.render(w, r, p, "confirm", title, append(scopeCrumbs(scope), crumb{Label: title}), v)
}

// whatGoes fills in the beliefs (not yet forgotten, unless erasing) a forget or purge
// of the scope, or of v.Entity, takes, and the episodes a scope-wide purge takes.
func (s *Server) whatGoes(ctx context.Context, v *confirmView) error {
	all, err := s.store.All(ctx, v.Scope)
	if err != nil {
		return err
	}
	for _, b := range all {
		if b.Status == memory.StatusForgotten && !v.Purge {
			continue
		}
		if v.Entity != nil && b.Entity != v.Entity.Key { // as memory.Selection's Entity selects
			continue
		}
		if len(v.Beliefs) < maxNamed {
			v.Beliefs = append(v.Beliefs, b)
		} else {
			v.More++
		}
	}
	if !v.Purge || v.Entity != nil {
		return nil
	}
	eps, err := s.store.Episodes(ctx, memory.EpisodeQuery{Scope: v.Scope, Limit: memory.MaxEpisodes})
	if err != nil {
		return err
	}
	v.Episodes, v.EpisodesFull = len(eps), len(eps) == memory.MaxEpisodes
	return nil
}

// forgetScope forgets every belief of a scope, or erases the scope, once the operator
// typed its name on the confirmation page.
func (s *Server) forgetScope(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	purge := r.PostForm.Get("purge") == "1"
	if !p.Can(forgetRight(purge)) {
		return forbiddenRight(forgetRight(purge))
	}
	scope := r.PathValue("scope")
	if err := checkScope(p, scope); err != nil {
		return err
	}
	if r.PostForm.Get("confirm") != scope {
		return badRequest("Type the scope's name to confirm; nothing was changed.")
	}
	ctx := r.Context()
	sel := memory.Selection{Scope: scope, All: true}
	var err error
	next := done(scopeURL(scope), "forgotten-all", 0)
	if purge {
		_, err = s.ops.Purge(ctx, p, sel)
		next = done(Prefix, "purged-scope", 0)
	} else {
		_, err = s.ops.Forget(ctx, p, sel)
	}
	if errors.Is(err, memory.ErrNotFound) {
		return conflict("The scope holds nothing to forget.", scopeURL(scope))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, next, http.StatusSeeOther) //nolint:gosec // G710: an own path, its scope escaped
	return nil
}

// confirmEntity asks before forgetting every belief about an entity (or, with purge=1,
// erasing them with the entity and its names), naming the beliefs. The user is an
// entity like any other here, as in the API: erasing the user erases the beliefs about
// the user.
func (s *Server) confirmEntity(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	purge := r.URL.Query().Get("purge") == "1"
	if !p.Can(forgetRight(purge)) {
		return forbiddenRight(forgetRight(purge))
	}
	scope, e, err := s.pathEntity(r, p, false)
	if err != nil {
		return err
	}
	ctx := r.Context()
	// The form names the entity by its key, not by the alias the page was reached by.
	page := entityURL(scope, e.Key)
	v := confirmView{Purge: purge, Entity: &e.Entity, Scope: scope, Action: page + "/forget", Back: page}
	if err := s.whatGoes(ctx, &v); err != nil {
		return err
	}
	title := "Forget everything about " + e.Name + "?"
	if purge {
		title = "Erase everything about " + e.Name + "?"
	}
	crumbs := append(scopeCrumbs(scope), crumb{Label: "Entities", URL: scopeURL(scope) + "#entities-h"},
		crumb{Label: e.Name, URL: page}, crumb{Label: title})
	return s.render(w, r, p, "confirm", title, crumbs, v)
}

// forgetEntity forgets every belief about an entity, or erases them with the entity and
// its names, then shows the scope without them: the scopes, when the erase left nothing
// of the scope.
func (s *Server) forgetEntity(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	purge := r.PostForm.Get("purge") == "1"
	if !p.Can(forgetRight(purge)) {
		return forbiddenRight(forgetRight(purge))
	}
	scope, name := r.PathValue("scope"), r.PathValue("name")
	if err := checkScope(p, scope); err != nil {
		return err
	}
	ctx := r.Context()
	sel := memory.Selection{Scope: scope, Entity: name}
	next := done(scopeURL(scope), "forgotten-entity", 0)
	if purge {
		if _, err := s.ops.Purge(ctx, p, sel); err != nil {
			return entityError(err)
		}
		next = done(scopeURL(scope), "purged-entity", 0)
		err := s.store.KnownScope(ctx, memory.ScopeQuery{Scope: scope, Sees: p.Sees})
		switch {
		case errors.Is(err, memory.ErrNotFound):
			next = done(Prefix, "purged-entity", 0)
		case err != nil:
			return err
		}
	} else {
		ids, err := s.ops.Forget(ctx, p, sel)
		if err != nil {
			return entityError(err)
		}
		if len(ids) == 0 {
			return conflict("Memory holds no belief about "+name+" left to forget.", entityURL(scope, name))
		}
	}
	http.Redirect(w, r, next, http.StatusSeeOther) //nolint:gosec // G710: an own path, its scope escaped
	return nil
}

// entityError answers an error of an operation on an entity: a name no entity goes by
// is not found, suggesting the nearest; the rest as lookupError.
func entityError(err error) error {
	if unknown, ok := errors.AsType[*memory.UnknownEntityError](err); ok {
		return noEntity(unknown)
	}
	return lookupError(err)
}
