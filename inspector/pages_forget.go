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
	// Belief is the one belief to go, or nil for a whole scope.
	Belief *memory.Belief
	Scope  string
	// Beliefs are what a scope-wide forget takes (the first maxNamed), More the rest.
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

// whatGoes fills in the beliefs (not yet forgotten, unless erasing) and the episodes a
// scope-wide forget or purge takes.
func (s *Server) whatGoes(ctx context.Context, v *confirmView) error {
	all, err := s.store.All(ctx, v.Scope)
	if err != nil {
		return err
	}
	for _, b := range all {
		if b.Status == memory.StatusForgotten && !v.Purge {
			continue
		}
		if len(v.Beliefs) < maxNamed {
			v.Beliefs = append(v.Beliefs, b)
		} else {
			v.More++
		}
	}
	if !v.Purge {
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
