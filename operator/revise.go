package operator

import (
	"context"
	"strings"
	"time"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// AssertParams is an operator's assertion of a belief.
type AssertParams struct {
	Scope     string
	Statement string
	Attribute string
	// Subject is who or what it is about; "" is user.
	Subject string
	// Kind is "" for memory.KindAttribute.
	Kind memory.Kind
	// Authoritative: only an operator may ever change it.
	Authoritative bool
	// ValidFrom is when it became true; nil is now.
	ValidFrom *time.Time
}

// Assert applies an operator's belief with origin operator, as `beliefs add`, POST
// /v1/beliefs and the inspector do. A refusal is a *RefusedError; an invalid belief a
// *transcript.InputError (memory.ErrInvalid); a failed embedding llm.ErrEmbedding.
func (o *Operator) Assert(ctx context.Context, v Viewer, p AssertParams) (memory.Outcome, error) {
	if !v.Sees(p.Scope) {
		return memory.Outcome{}, ErrScope
	}
	f := memory.Fact{Statement: p.Statement, Subject: p.Subject, Attribute: p.Attribute, Kind: p.Kind,
		Confidence: 1, Origin: memory.OriginUserStated, ValidFrom: p.ValidFrom}
	if f.Subject == "" {
		f.Subject = "user"
	}
	if f.Kind == "" {
		f.Kind = memory.KindAttribute
	}
	if p.Authoritative {
		f.Origin = memory.OriginAuthoritative
	}
	if err := o.redact(ctx, p.Scope, &f); err != nil {
		return memory.Outcome{}, err
	}
	return o.apply(ctx, &memory.Batch{Scope: p.Scope, Facts: []memory.Fact{f}}, "")
}

// CorrectParams is an operator's revision of one belief.
type CorrectParams struct {
	ID int64
	// Statement is what is true instead; give it or Retract.
	Statement string
	Retract   bool
	// Reason is memory.ReasonCorrection (it was never true; "" too) or ReasonTemporal.
	Reason memory.Reason
}

// Correct supersedes or retracts belief id as an operator, as `beliefs correct`, POST
// /v1/beliefs/{id}/correct and the inspector do. A belief v can't see is a
// *NotFoundError; the rest as Assert.
func (o *Operator) Correct(ctx context.Context, v Viewer, p CorrectParams) (memory.Outcome, error) {
	if (strings.TrimSpace(p.Statement) == "") == !p.Retract {
		return memory.Outcome{}, transcript.InputErrorf(nil, "", "give exactly one of statement and retract")
	}
	if p.Reason == "" {
		p.Reason = memory.ReasonCorrection
	}
	if p.Reason != memory.ReasonCorrection && p.Reason != memory.ReasonTemporal {
		return memory.Outcome{}, transcript.InputErrorf(nil, "reason", "must be correction or temporal")
	}
	old, err := o.Belief(ctx, v, p.ID)
	if err != nil {
		return memory.Outcome{}, err
	}
	f := memory.Fact{Statement: p.Statement, Subject: old.Subject, Attribute: old.Attribute, Kind: old.Kind,
		Confidence: 1, Origin: memory.OriginUserStated, Quote: "operator correction",
		Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: p.Reason,
			Rationale: "operator correction"}}
	if old.Origin == memory.OriginAuthoritative {
		f.Origin = memory.OriginAuthoritative
	}
	if p.Retract {
		f.Resolves.Action = memory.ActionRetract
	}
	if err := o.redact(ctx, old.Scope, &f); err != nil {
		return memory.Outcome{}, err
	}
	return o.apply(ctx, &memory.Batch{Scope: old.Scope, Candidates: []int64{p.ID}, Facts: []memory.Fact{f}}, old.Statement)
}

// apply embeds the batch's statement and the revision it makes (a future few-shot
// example) in one call, and applies the batch with origin operator. old is the
// statement revised, if any.
func (o *Operator) apply(ctx context.Context, b *memory.Batch, old string) (memory.Outcome, error) {
	if o.embed == nil {
		return memory.Outcome{}, errNoEmbedder
	}
	f := &b.Facts[0]
	var texts []string
	if f.Statement != "" {
		texts = append(texts, f.Statement)
	}
	if f.Resolves != nil {
		texts = append(texts, memory.EventText(old, f.Quote, f.Statement))
	}
	vecs, err := o.embedTexts(ctx, texts)
	if err != nil {
		return memory.Outcome{}, err
	}
	b.EmbedModel = o.model
	if f.Statement != "" {
		f.Embedding = vecs[0]
	}
	if f.Resolves != nil {
		f.EventEmbedding = vecs[len(texts)-1]
	}
	b.Origin, b.At = memory.RevisionOperator, o.now()
	applied, err := o.store.Apply(ctx, b)
	if err != nil {
		return memory.Outcome{}, err
	}
	out := applied.Facts[0]
	if out.Kind == memory.OutcomeConflict {
		return out, &RefusedError{Detail: out.Detail}
	}
	return out, nil
}
