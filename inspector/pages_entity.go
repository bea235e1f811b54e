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
	scope, name := r.PathValue("scope"), r.PathValue("name")
	if err := checkScope(p, scope); err != nil {
		return err
	}
	ctx := r.Context()
	// A misspelt scope would otherwise show its user, empty (every scope has one).
	if err := s.knownScope(ctx, p, scope); err != nil {
		return err
	}
	e, err := s.ops.Entity(ctx, p, scope, name, true)
	if err != nil {
		return entityError(err)
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
