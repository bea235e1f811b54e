package operator

import (
	"context"
	"errors"

	"github.com/credohq/credo/memory"
)

// Viewer is who acts: the scopes whose things it may see. An API key's principal is one.
type Viewer interface {
	Sees(scope string) bool
}

// Owner is the database's owner, as the CLI runs: it sees every scope, and forgotten
// beliefs too, which stay stored for audit.
var Owner Viewer = owner{}

type owner struct{}

func (owner) Sees(string) bool { return true }

// visible is nil when v may see the scope of the thing id (what is memory.OfBelief,
// OfEpisode, OfItem or OfEvent), and the same *NotFoundError, after the same one index
// read, whether the id is unknown or another tenant's: neither the answer nor its time
// tells them apart. It is the one visibility check of every surface.
//
// It returns the scope, so that the read that follows names it: on Citus, finding an
// id's scope is one index probe per shard, and everything after it runs on the scope's
// shard alone.
func (o *Operator) visible(ctx context.Context, v Viewer, what string, id int64) (string, error) {
	scope, err := o.store.ScopeOf(ctx, what, id)
	switch {
	case errors.Is(err, memory.ErrNotFound) || (err == nil && !v.Sees(scope)):
		return "", &NotFoundError{What: memory.Noun(what), ID: id}
	case err != nil:
		return "", err
	}
	return scope, nil
}

// found is got's value, unless it is not found or not v's to see: then, as for an
// unknown id, a *NotFoundError.
func found[T any](v Viewer, what string, id int64, got *T, err error, scope func(*T) string) (*T, error) {
	if errors.Is(err, memory.ErrNotFound) || (err == nil && !v.Sees(scope(got))) {
		return nil, &NotFoundError{What: memory.Noun(what), ID: id}
	}
	if err != nil {
		return nil, err
	}
	return got, nil
}

// Belief is belief id, unless v can't see it. Forgotten beliefs are not found either,
// but by the Owner.
func (o *Operator) Belief(ctx context.Context, v Viewer, id int64) (*memory.Belief, error) {
	scope, err := o.visible(ctx, v, memory.OfBelief, id)
	if err != nil {
		return nil, err
	}
	b, err := o.store.GetIn(ctx, scope, id)
	b, err = found(v, memory.OfBelief, id, b, err, func(b *memory.Belief) string { return b.Scope })
	if err == nil && b.Status == memory.StatusForgotten && v != Owner {
		return nil, &NotFoundError{What: memory.Noun(memory.OfBelief), ID: id}
	}
	return b, err
}

// Item is review item id, unless v can't see it.
func (o *Operator) Item(ctx context.Context, v Viewer, id int64) (*memory.Conflict, error) {
	scope, err := o.visible(ctx, v, memory.OfItem, id)
	if err != nil {
		return nil, err
	}
	c, err := o.store.ConflictIn(ctx, scope, id)
	return found(v, memory.OfItem, id, c, err, func(c *memory.Conflict) string { return c.Scope })
}

// Event is revision event id, unless v can't see it; an event of a forgotten belief is
// not found either, as memory.Store.EventIn says.
func (o *Operator) Event(ctx context.Context, v Viewer, id int64) (*memory.Event, error) {
	scope, err := o.visible(ctx, v, memory.OfEvent, id)
	if err != nil {
		return nil, err
	}
	e, err := o.store.EventIn(ctx, scope, id)
	return found(v, memory.OfEvent, id, e, err, func(e *memory.Event) string { return e.Scope })
}

// Episode is episode id, unless v can't see it.
func (o *Operator) Episode(ctx context.Context, v Viewer, id int64) (*memory.Episode, error) {
	scope, err := o.visible(ctx, v, memory.OfEpisode, id)
	if err != nil {
		return nil, err
	}
	e, err := o.store.EpisodeIn(ctx, scope, id)
	return found(v, memory.OfEpisode, id, e, err, func(e *memory.Episode) string { return e.Scope })
}
