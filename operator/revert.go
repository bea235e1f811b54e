package operator

import (
	"context"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// Revert undoes revision event id as an operator, as `beliefs revert`, POST
// /v1/events/{id}/revert and the inspector do, through memory.Store.Revert. note is why;
// by names who reverts. An event v can't see is a *NotFoundError; a refusal a
// *memory.RevertRefusedError; a note too long a *transcript.InputError.
func (o *Operator) Revert(ctx context.Context, v Viewer, id int64, note, by string) (*memory.Reverted, error) {
	if err := transcript.CheckText("note", note, memory.MaxNoteLen); err != nil {
		return nil, err
	}
	scope, err := o.visible(ctx, v, memory.OfEvent, id)
	if err != nil {
		return nil, err
	}
	return o.store.Revert(ctx, memory.RevertParams{EventID: id, Scope: scope, Note: note, By: by})
}
