package inspector

import (
	"net/http"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/memory"
)

type entityView struct {
	Entity     memory.Entity
	Slots      []slotView
	CanOperate bool
	CanPurge   bool
}

// pathEntity is the entity the request's path names, {scope} and {name} (a name or an
// alias), after the checks every entity page makes: the scope is p's, and memory held it
// (a misspelt scope is "no such scope", with the nearest one, not its empty user).
func (s *Server) pathEntity(r *http.Request, p *api.Principal, history bool) (string, *memory.EntityView, error) {
	scope, name := r.PathValue("scope"), r.PathValue("name")
	if err := checkScope(p, scope); err != nil {
		return "", nil, err
	}
	if err := s.knownScope(r.Context(), p, scope); err != nil {
		return "", nil, err
	}
	e, err := s.ops.Entity(r.Context(), p, scope, name, history)
	if err != nil {
		return "", nil, entityError(err)
	}
	return scope, e, nil
}

// slotView is one slot of an entity: what is current in it and its chain as a
// timeline.
type slotView struct {
	Attribute string
	Current   []memory.Belief
	// Revised is whether the slot held anything before what is current.
	Revised  bool
	Timeline timeline
}

// entityPage shows an entity of a scope, found by its name or an alias: its kind and
// aliases, and each slot's current beliefs and chain, oldest first, as the belief
// page's timeline. All slots share one axis, so that they compare at a glance.
func (s *Server) entityPage(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	scope, e, err := s.pathEntity(r, p, true)
	if err != nil {
		return err
	}
	v := entityView{Entity: e.Entity, CanOperate: p.Can(api.RightOperate), CanPurge: p.Can(api.RightPurge)}
	crumbs := append(scopeCrumbs(scope), crumb{Label: "Entities", URL: scopeURL(scope) + "#entities-h"}, crumb{Label: e.Name})
	chains := make([][]memory.Belief, len(e.Slots))
	var all []memory.Belief
	for i, sl := range e.Slots {
		chains[i] = sl.History
		if chains[i] == nil { // nothing but what is current
			chains[i] = sl.Current
		}
		all = append(all, chains[i]...)
	}
	if len(all) == 0 {
		return s.render(w, r, p, "entity", e.Name+" in "+scope, crumbs, v)
	}
	ax := newAxis(all, s.now())
	for i, sl := range e.Slots {
		v.Slots = append(v.Slots, slotView{Attribute: sl.Attribute, Current: sl.Current,
			Revised: len(chains[i]) > len(sl.Current), Timeline: ax.timeline(chains[i], 0)})
	}
	return s.render(w, r, p, "entity", e.Name+" in "+scope, crumbs, v)
}
