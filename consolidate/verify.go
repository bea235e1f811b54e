package consolidate

import (
	"context"
	"time"

	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/verify"
)

// secondOpinion asks the model, in one call, about the batch's directives that the
// engine would hold for want of a second opinion, and sets its verdicts on them; most
// batches have none, and no call is made. It runs before the batch's transaction: none
// waits on a model. A model that gives no usable answer leaves them to the engine,
// which holds them.
func (w *Worker) secondOpinion(ctx context.Context, batch *memory.Batch, rep *Report) (err error) {
	ctx, span := tracing.Start(ctx, "consolidate.verify")
	defer func() { tracing.End(span, err) }()
	asker := verify.Asker{Chat: w.cfg.Chat, Prompts: w.prompts, Retries: w.cfg.MalformedRetries, Observe: w.observeAttempt(ctx, rep)}
	start := time.Now()
	out, err := asker.Opinions(ctx, w.cfg.Store, batch)
	if out.Asked > 0 {
		rep.ChatDuration += time.Since(start)
	}
	if out.Unanswered != nil {
		w.log.WarnContext(ctx, "no usable second opinion; the directives asked about are held", "scope", batch.Scope,
			"directives", out.Asked, "error", llm.Kind(out.Unanswered))
		w.log.DebugContext(ctx, "no usable second opinion", "scope", batch.Scope, "error", out.Unanswered)
	}
	return err
}
