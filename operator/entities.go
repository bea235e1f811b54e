package operator

import (
	"context"

	"github.com/credohq/credo/memory"
)

// Entities lists the entities of a scope v sees: every front end's one read of a
// scope's registry.
func (o *Operator) Entities(ctx context.Context, v Viewer, scope string) ([]memory.Entity, error) {
	if !v.Sees(scope) {
		return nil, ErrScope
	}
	return o.store.Entities(ctx, scope)
}

// Entity reads the entity of a scope v sees called name (its name or an alias), with its
// current beliefs by slot and, with history, each slot's chain. An unknown name is a
// *memory.UnknownEntityError, which suggests the nearest name.
func (o *Operator) Entity(ctx context.Context, v Viewer, scope, name string, history bool) (*memory.EntityView, error) {
	if !v.Sees(scope) {
		return nil, ErrScope
	}
	return o.store.EntityByName(ctx, scope, name, history)
}

// MergeEntities merges two entities of a scope v sees, as an operator decides: Other's
// names and beliefs become Into's, nothing else changes.
func (o *Operator) MergeEntities(ctx context.Context, v Viewer, m memory.Merge) (*memory.Merged, error) {
	if !v.Sees(m.Scope) {
		return nil, ErrScope
	}
	return o.store.MergeEntities(ctx, m)
}
