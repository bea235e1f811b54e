package operator

import (
	"context"
	"fmt"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// Resolve decides review item id (a refused revision, or a belief whose basis changed)
// with verdict and the operator's note, as `beliefs resolve`, POST
// /v1/conflicts/{id}/resolve and the inspector do. The decision is embedded as a
// labeled example of its scope, then applied through memory.Store.Decide, which
// re-checks under the scope's lock that the item is still open.
//
// An item v can't see is a *NotFoundError; a bad verdict or note a
// *transcript.InputError; a closed item memory.ErrClosed, one that no longer applies
// memory.ErrNotApplicable; a failed embedding llm.ErrEmbedding, with nothing changed.
func (o *Operator) Resolve(ctx context.Context, v Viewer, id int64, verdict memory.Verdict, note string) (*memory.Decided, error) {
	if err := transcript.CheckText("note", note, memory.MaxNoteLen); err != nil {
		return nil, err
	}
	item, err := o.Item(ctx, v, id)
	if err != nil {
		return nil, err
	}
	if verdict != memory.VerdictApply && verdict != memory.VerdictDismiss {
		return nil, transcript.InputErrorf(memory.ErrInvalid, "verdict", "%q is not apply or dismiss", verdict)
	}
	if !item.Open() {
		// Checked again by Decide; checked here too so a repeated click costs no model call.
		return nil, fmt.Errorf("review item %d: %w (%s)", item.ID, memory.ErrClosed, *item.Resolution)
	}
	// The item's scope is known: the decision reads it on its scope's shard only (Citus).
	d := memory.Decision{ID: item.ID, Scope: item.Scope, Verdict: verdict, Note: note}
	if o.embed != nil && o.model != "" {
		text, err := o.store.ReviewText(ctx, item)
		if err != nil {
			return nil, err
		}
		vecs, err := o.embedTexts(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		d.EmbedModel, d.Embedding = o.model, vecs[0]
	}
	return o.store.Decide(ctx, d)
}
