package extract

import (
	"context"

	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/verify"
)

// secondOpinion asks the model, in one call, about the batch's destructive directives
// that speaker, entity and slot do not settle, and sets its verdicts on them; most
// batches have none, and no call is made. A model that gives no usable answer leaves
// them to the engine, which holds them. The calls count in rep as the extraction's own.
func (w *Worker) secondOpinion(ctx context.Context, batch *memory.Batch, rep *Report) (err error) {
	ctx, span := tracing.Start(ctx, "extract.verify")
	defer func() { tracing.End(span, err) }()
	asker := verify.Asker{Chat: w.cfg.Chat, Prompts: w.prompts, Retries: w.cfg.MalformedRetries, Logger: w.log, Observe: func(a llm.Attempt) {
		rep.ChatCalls++
		rep.Verifications++
		rep.Usage.PromptTokens += a.Response.Usage.PromptTokens
		rep.Usage.CompletionTokens += a.Response.Usage.CompletionTokens
		if a.Retrying {
			w.log.WarnContext(ctx, "malformed verification answer, asking again", "error", llm.Kind(a.Err))
			w.log.DebugContext(ctx, "malformed verification answer", "error", a.Err)
		}
	}}
	out, err := asker.Opinions(ctx, w.cfg.Store, batch)
	rep.ChatDuration += out.Duration
	return err
}
