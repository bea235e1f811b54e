package operator

import (
	"errors"
	"strconv"

	"github.com/credohq/credo/memory"
)

// NotFoundError is a thing looked up by id that the viewer cannot see: unknown, in
// another tenant's scope, or a forgotten belief, all alike. It is memory.ErrNotFound.
type NotFoundError struct {
	// What is the thing as users call it: belief, review item, event, episode.
	What string
	ID   int64
}

func (e *NotFoundError) Error() string {
	return e.What + " " + strconv.FormatInt(e.ID, 10) + ": " + memory.ErrNotFound.Error()
}

// Is reports memory.ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == memory.ErrNotFound }

// RefusedError is an operator's revision the revision engine refused (an entrenched
// belief, a target no longer current): nothing was changed.
type RefusedError struct {
	// Detail is the engine's reason.
	Detail string
}

func (e *RefusedError) Error() string { return "refused: " + e.Detail }

// ErrScope is a scope outside the viewer's: front ends answer it as forbidden, whether
// the scope exists or not.
var ErrScope = errors.New("the scope is outside the viewer's")
