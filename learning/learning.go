// Package learning turns revision events into labeled examples and retrieves the most
// similar ones as few-shot guidance for later extractions, so extraction improves
// without fine-tuning.
package learning

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/credohq/credo/memory"
)

// DefaultExamples is how many examples a prompt shows: enough to teach, few enough that
// the prompt stays small however many events exist.
const DefaultExamples = 3

// Example is one past revision: what was believed, what was said, what changed and why.
type Example struct {
	// EventID is the revision event, or the review item of a Kept example.
	EventID  int64
	Scope    string
	Action   string
	Reason   string
	Origin   string
	Old      string
	New      string // empty for a retraction
	Excerpt  string
	Distance float64
	// Kept marks an operator's dismissal of a refused revision: Old was kept and the
	// change to New was not made. It teaches what not to revise.
	Kept bool
	// Reverted marks a revision an operator undid, with the operator's Note: New did
	// not revise Old. It teaches what not to revise, as Kept does.
	Reverted bool
	Note     string
}

// priority ranks what teaches most: an operator's correction or revert, then any
// correction (the old belief was wrong), then ordinary updates. It is subtracted from
// the distance.
func (e Example) priority() float64 {
	p := 0.0
	if e.Origin == "operator" || e.Reverted {
		p += 0.15 // an operator's revert is an operator's decision
	}
	if e.Reason == "correction" || e.Reverted {
		p += 0.1 // and it says the revision was wrong
	}
	return p
}

// Retriever finds similar past revisions.
type Retriever struct {
	store *memory.Store
	// max is the number of examples returned.
	max int
	// global is an operator-curated scope whose examples every scope may see; it must
	// hold no user data. Empty: none.
	global string
}

// NewRetriever returns a retriever of at most limit examples (0: DefaultExamples) from
// store's revision events, with the optional global scope.
func NewRetriever(store *memory.Store, limit int, global string) *Retriever {
	return &Retriever{store: store, max: cmp.Or(limit, DefaultExamples), global: global}
}

// Max is the most examples Similar returns.
func (r *Retriever) Max() int { return r.max }

// On is the retriever with its reads made through store, e.g. one on a connection its
// caller holds (memory.Store.WithConn).
func (r *Retriever) On(store *memory.Store) *Retriever {
	c := *r
	c.store = store
	return &c
}

// Scopes are the scopes scope may learn from: itself and the global set. Never another
// tenant's.
func (r *Retriever) Scopes(scope string) []string {
	if r.global == "" || r.global == scope {
		return []string{scope}
	}
	return []string{scope, r.global}
}

// Similar is up to max examples for a transcript whose vector is vec: the nearest
// revision events of scope and of the global set, each scope's own nearest whatever
// other scopes hold (memory.Store.NearestEvents), re-ranked so that corrections come
// first, without repeats.
func (r *Retriever) Similar(ctx context.Context, scope, model string, vec []float32) ([]Example, error) {
	if len(vec) == 0 {
		return nil, nil
	}
	// Candidates are over-fetched so that re-ranking and de-duplication still leave max.
	var found []Example
	for _, sc := range r.Scopes(scope) {
		evs, err := r.store.NearestEvents(ctx, sc, model, vec, r.max*4)
		if err != nil {
			return nil, fmt.Errorf("similar examples of %q: %w", scope, err)
		}
		for _, ev := range evs {
			found = append(found, Example{EventID: ev.ID, Scope: ev.Scope, Action: string(ev.Action), Reason: string(ev.Reason),
				Origin: string(ev.Origin), Old: ev.OldStatement, New: deref(ev.NewStatement), Excerpt: deref(ev.Excerpt),
				Distance: *ev.Distance, Reverted: ev.Reverted(), Note: deref(ev.RevertNote)})
		}
	}
	kept, err := r.store.NearestDismissals(ctx, memory.DismissalQuery{Scopes: r.Scopes(scope), Model: model, Vector: vec, Limit: r.max})
	if err != nil {
		return nil, fmt.Errorf("similar examples of %q: %w", scope, err)
	}
	for _, d := range kept {
		found = append(found, Example{EventID: d.ConflictID, Scope: d.Scope, Action: d.Action, Reason: d.Reason,
			Origin: string(memory.RevisionOperator), Old: d.Old, New: d.New, Excerpt: d.Excerpt, Distance: d.Distance, Kept: true})
	}
	slices.SortStableFunc(found, func(a, b Example) int {
		return cmp.Compare(a.Distance-a.priority(), b.Distance-b.priority())
	})
	seen := map[string]bool{}
	out := make([]Example, 0, r.max)
	for _, e := range found {
		key := strings.ToLower(fmt.Sprint(e.Kept, e.Reverted, "\x00", e.Old, "\x00", e.New))
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, e)
		if len(out) == r.max {
			break
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
