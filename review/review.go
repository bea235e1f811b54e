// Package review carries out operators' decisions on the review queue: refused
// revisions and beliefs whose basis changed. A decision is embedded as a labeled
// example of its scope, then applied through memory.Store.Decide, so that the CLI, the
// API and the web inspector decide the same way.
package review

import (
	"context"
	"errors"
	"fmt"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// ErrEmbedding is returned when the decision could not be embedded: nothing was changed.
var ErrEmbedding = errors.New("the embedding model did not answer")

// Reviewer decides review items.
type Reviewer struct {
	store *memory.Store
	embed llm.Embedder
	model string
}

// New returns a reviewer writing to store. With embed nil, decisions are not embedded:
// an applied revision is embedded by the next consolidation pass, a dismissal never.
func New(store *memory.Store, embed llm.Embedder, model string) *Reviewer {
	return &Reviewer{store: store, embed: embed, model: model}
}

// Resolve closes item with verdict and the operator's note. The caller has read item and
// checked that the operator may see its scope; Decide re-checks under the scope's lock
// that it is still open. Errors wrap memory.ErrClosed, memory.ErrNotApplicable,
// memory.ErrInvalid, memory.ErrNotFound or ErrEmbedding.
func (r *Reviewer) Resolve(ctx context.Context, item *memory.Conflict, verdict memory.Verdict, note string) (*memory.Decided, error) {
	if verdict != memory.VerdictApply && verdict != memory.VerdictDismiss {
		return nil, fmt.Errorf("%w: verdict %q is not apply or dismiss", memory.ErrInvalid, verdict)
	}
	if !item.Open() {
		// Checked again by Decide; checked here too so a repeated click costs no model call.
		return nil, fmt.Errorf("review item %d: %w (%s)", item.ID, memory.ErrClosed, *item.Resolution)
	}
	// The item's scope is known: the decision reads it on its scope's shard only (Citus).
	d := memory.Decision{ID: item.ID, Scope: item.Scope, Verdict: verdict, Note: note}
	if r.embed != nil && r.model != "" {
		text, err := r.store.ReviewText(ctx, item)
		if err != nil {
			return nil, err
		}
		res, err := r.embed.Embed(ctx, []string{text})
		if err == nil && len(res.Vectors) != 1 {
			err = fmt.Errorf("%d vectors for 1 text", len(res.Vectors))
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrEmbedding, err)
		}
		d.EmbedModel, d.Embedding = r.model, res.Vectors[0]
	}
	return r.store.Decide(ctx, d)
}
