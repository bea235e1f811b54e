package consolidate

import (
	"context"

	"github.com/credohq/credo/internal/tracing"
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
	asker := verify.Asker{Chat: w.cfg.Chat, Prompts: w.prompts, Retries: w.cfg.MalformedRetries, Logger: w.log, Observe: w.observeAttempt(ctx, rep)}
	out, err := asker.Opinions(ctx, w.cfg.Store, batch)
	rep.ChatDuration += out.Duration
	return err
}
