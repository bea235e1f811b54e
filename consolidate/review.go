package consolidate

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

// maxReviewItems bounds the flagged beliefs of one review call, and so its prompt.
const maxReviewItems = 16

// review asks the model, in one call, whether the scope's oldest flagged beliefs still
// hold now that a basis of theirs changed, and applies the answers through the engine:
// keep clears the flag, retract and supersede retire the belief (closing its items).
// It reports whether it applied a verdict and, if so, whether flagged beliefs were
// left for a follow-up pass. A belief the model did not answer about stays flagged and
// is asked about on the scope's next pass: a follow-up is never scheduled for it, so a
// model that keeps failing cannot keep a scope busy.
func (w *Worker) review(ctx context.Context, scope string, rep *Report) (applied, more bool, err error) {
	ctx, span := tracing.Start(ctx, "consolidate.review")
	defer func() { tracing.End(span, err) }()
	flagged, err := w.cfg.Store.Flagged(ctx, scope, maxReviewItems+1)
	if err != nil || len(flagged) == 0 {
		return false, false, err
	}
	if len(flagged) > maxReviewItems {
		flagged, more = flagged[:maxReviewItems], true
	}
	items := make([]prompts.ReviewItem, len(flagged))
	for i, f := range flagged {
		items[i] = prompts.ReviewItem{Statement: f.Belief.Statement, Attribute: f.Belief.Attribute, ValidFrom: f.Belief.ValidFrom}
		for _, b := range f.Bases {
			items[i].Bases = append(items[i].Bases, prompts.ReviewBasis{Statement: b.Statement, Status: b.Status, Now: b.Now})
		}
	}
	system, user, err := w.prompts.Review(prompts.Review{Scope: scope, Items: items})
	if err != nil {
		return false, false, err
	}
	chatStart := time.Now()
	verdicts, err := w.askReview(ctx, system, user, len(items), rep)
	rep.ChatDuration += time.Since(chatStart)
	if llm.IsMalformed(err) {
		// Left flagged: asked again on the scope's next pass, and in the queue for an
		// operator meanwhile.
		w.log.WarnContext(ctx, "malformed review answers; beliefs left flagged", "scope", scope, "beliefs", len(items), "error", llm.Kind(err))
		w.log.DebugContext(ctx, "malformed review answers", "scope", scope, "error", err)
		rep.Malformed++
		return false, false, nil
	}
	if err != nil || len(verdicts) == 0 {
		return false, false, err
	}
	batch := reviewBatch(scope, flagged, verdicts)
	if err := w.secondOpinion(ctx, batch, rep); err != nil {
		return false, false, err
	}
	var out *memory.Result
	err = w.cfg.Store.InTx(ctx, func(tx pgx.Tx) error {
		out, err = w.cfg.Store.ApplyTx(ctx, tx, batch)
		return err
	})
	if err != nil {
		return false, false, fmt.Errorf("apply review of %q: %w", scope, err)
	}
	rep.Reviewed += len(verdicts)
	for _, o := range out.All() {
		if o.Kind == memory.OutcomeConflict {
			rep.Conflicts++
		} else {
			rep.Applied++
		}
	}
	return true, more, nil
}

// reviewBatch turns verdicts on flagged beliefs into one consolidation batch. The
// candidates are the flagged beliefs, then what replaced their bases, so that a
// superseding statement rests on the new basis as the old one rested on the old.
func reviewBatch(scope string, flagged []memory.Flagged, verdicts []reviewVerdict) *memory.Batch {
	b := &memory.Batch{Scope: scope, Origin: memory.RevisionConsolidation}
	for _, f := range flagged {
		b.Candidates = append(b.Candidates, f.Belief.ID)
	}
	for _, v := range verdicts {
		f := flagged[v.Index]
		switch v.Action {
		case reviewKeep:
			b.Keep = append(b.Keep, v.Index)
		case reviewRetract:
			b.Resolutions = append(b.Resolutions, memory.Resolution{Index: v.Index, Action: memory.ActionRetract, Reason: v.Reason,
				Rationale: "its basis changed"})
		case reviewSupersede:
			fact := memory.Fact{Statement: v.Statement, Subject: f.Belief.Subject, Attribute: f.Belief.Attribute, Kind: f.Belief.Kind,
				Confidence: f.Belief.Confidence, Origin: memory.OriginInferred,
				Resolves: &memory.Directive{Index: v.Index, Action: memory.ActionSupersede, Reason: v.Reason, Rationale: "its basis changed"}}
			for _, basis := range f.Bases {
				if basis.NowID == nil {
					continue
				}
				fact.DependsOn = append(fact.DependsOn, len(b.Candidates))
				b.Candidates = append(b.Candidates, *basis.NowID)
			}
			b.Facts = append(b.Facts, fact)
		}
	}
	return b
}

// askReview asks the model about n flagged beliefs; a malformed answer is asked again
// at most MalformedRetries times.
func (w *Worker) askReview(ctx context.Context, system, user string, n int, rep *Report) ([]reviewVerdict, error) {
	req := llm.SchemaRequest(system, user, prompts.ReviewSchemaName, prompts.ReviewSchema())
	parse := func(content string) ([]reviewVerdict, error) {
		vs, _, err := parseReview(content, n)
		return vs, err
	}
	return llm.ChatParsed(ctx, w.cfg.Chat, req, w.cfg.MalformedRetries, parse, w.observeAttempt(ctx, rep))
}
