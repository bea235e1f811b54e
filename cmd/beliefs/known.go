package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/credohq/credo/memory"
)

// knownScope checks the scope of a read that found found rows: nil when it found any,
// or when memory has held an episode or a belief of scope (with inherit, or of an
// ancestor), so that nothing is the answer; otherwise the not-found error naming the
// nearest scope (exit 3), since a misspelt scope would read as an empty memory. In a
// memory that holds no scope at all nothing else could have been meant: the read stays
// empty (exit 0), and stderr says so.
func (e *env) knownScope(ctx context.Context, scope string, inherit bool, found int) error {
	if found > 0 {
		return nil
	}
	store, err := e.open(ctx)
	if err != nil {
		return err
	}
	err = store.KnownScope(ctx, memory.ScopeQuery{Scope: scope, Inherit: inherit})
	if unknown, ok := errors.AsType[*memory.UnknownScopeError](err); ok && unknown.Empty {
		fmt.Fprintf(e.stderr, "beliefs: %v\n", unknown)
		return nil
	}
	return err
}
