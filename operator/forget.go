package operator

import (
	"context"

	"github.com/credohq/credo/memory"
)

// Forget forgets the selected beliefs of a scope v sees, softly: they leave every read and
// prompt and stay stored for audit. It answers the ids forgotten.
func (o *Operator) Forget(ctx context.Context, v Viewer, sel memory.Selection) ([]int64, error) {
	if !v.Sees(sel.Scope) {
		return nil, ErrScope
	}
	return o.store.Forget(ctx, sel)
}

// Purge erases the selected beliefs of a scope v sees, or with All the whole scope, and
// every copy of their text, for good.
func (o *Operator) Purge(ctx context.Context, v Viewer, sel memory.Selection) (*memory.Purged, error) {
	if !v.Sees(sel.Scope) {
		return nil, ErrScope
	}
	return o.store.Purge(ctx, sel)
}

// PurgeSubtree erases every scope starting with prefix, which v must see: it then sees
// every scope under it.
func (o *Operator) PurgeSubtree(ctx context.Context, v Viewer, prefix string) (*memory.SubtreePurged, error) {
	if !v.Sees(prefix) {
		return nil, ErrScope
	}
	return o.store.PurgeSubtree(ctx, prefix)
}

// ForgetBelief forgets belief id, or with purge erases it, after the one visibility
// check: a belief v can't see is a *NotFoundError. It answers the belief as it was.
func (o *Operator) ForgetBelief(ctx context.Context, v Viewer, id int64, purge bool) (*memory.Belief, error) {
	b, err := o.Belief(ctx, v, id)
	if err != nil {
		return nil, err
	}
	sel := memory.Selection{Scope: b.Scope, IDs: []int64{id}}
	if purge {
		_, err = o.store.Purge(ctx, sel)
	} else {
		_, err = o.store.Forget(ctx, sel)
	}
	return b, err
}
