package inspector

import (
	"context"
	"errors"
	"net/http"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/memory"
)

type beliefView struct {
	Belief     memory.Belief
	Timeline   timeline
	Episode    *sourceView
	Events     []memory.Event
	CanOperate bool
	CanPurge   bool
}

// beliefPage shows a belief's supersession chain as a timeline of valid and known
// time, the episode it came from with its quote marked, and the revision events of
// the chain.
func (s *Server) beliefPage(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	b, err := s.visibleBelief(ctx, p, id)
	if err != nil {
		return err
	}
	chain, err := s.store.HistoryIn(ctx, b.Scope, id)
	if errors.Is(err, memory.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		return err
	}
	kept := chain[:0]
	ids := make([]int64, 0, len(chain))
	for _, c := range chain {
		if p.Sees(c.Scope) { // a chain never leaves its scope; this only makes sure
			kept = append(kept, c)
			ids = append(ids, c.ID)
		}
	}
	v := beliefView{Belief: *b, Timeline: newTimeline(kept, id, s.now()),
		CanOperate: p.Can(api.RightOperate), CanPurge: p.Can(api.RightPurge)}
	if v.Events, err = s.store.EventsAbout(ctx, b.Scope, ids); err != nil {
		return err
	}
	if v.Episode, err = s.source(ctx, b); err != nil {
		return err
	}
	return s.render(w, r, p, "belief", b.Statement, append(scopeCrumbs(b.Scope), crumb{Label: "Belief " + itoa(id)}), v)
}

// visibleBelief is belief id, unless the key can't see it: then, as for an unknown id,
// not found, through the one visibility check of every surface
// (operator.Operator.Belief). Forgotten beliefs are not found either, as in the API.
func (s *Server) visibleBelief(ctx context.Context, p *api.Principal, id int64) (*memory.Belief, error) {
	b, err := s.ops.Belief(ctx, p, id)
	if err != nil {
		return nil, lookupError(err)
	}
	return b, nil
}

// source is the episode b was extracted from, with b's quote marked; nil when b has
// none (an operator's belief) or it was purged.
//
//nolint:nilnil // no source is a page without that section, not an error
func (s *Server) source(ctx context.Context, b *memory.Belief) (*sourceView, error) {
	if b.EpisodeID == nil {
		return nil, nil
	}
	ep, err := s.store.EpisodeIn(ctx, b.Scope, *b.EpisodeID)
	if errors.Is(err, memory.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if ep.Scope != b.Scope {
		return nil, nil
	}
	return newSource(ep, deref(b.Quote)), nil
}
