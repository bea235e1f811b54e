// Package verify asks the chat model for a second opinion on the destructive directives
// of a batch that speaker, entity and slot do not settle (memory.Store.Questions): one
// call for all of a batch's, schema `verification`, whose verdicts become the
// directives' Opinions before the engine applies the batch. Extraction and
// consolidation both ask through it.
package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

const (
	// MaxAnswerBytes bounds a verification answer: a verdict is a few dozen bytes and a
	// short sentence.
	MaxAnswerBytes = 64 << 10
	// MaxWhy bounds a verdict's why, in characters: the prompt asks for one short
	// sentence, and it is stored with the directive.
	MaxWhy = 500
)

// Questioner says which destructive directives of a batch want a second opinion:
// memory.Store.
type Questioner interface {
	Questions(ctx context.Context, b *memory.Batch) ([]memory.Question, error)
}

// Asker asks the chat model for second opinions.
type Asker struct {
	Chat    llm.Chatter
	Prompts *prompts.Prompts
	// Retries is how many times a malformed answer is asked again.
	Retries int
	// Observe, when set, is told about every call, for accounting and logs.
	Observe func(llm.Attempt)
	// Logger, when set, is told when no usable answer came.
	Logger *slog.Logger
}

// Outcome is what Opinions did for a batch.
type Outcome struct {
	// Asked is the number of directives asked about; 0: no call was made.
	Asked int
	// Holds counts the verdicts that let their directive through.
	Holds int
	// Duration is the time spent asking, 0 when no call was made.
	Duration time.Duration
	// Unanswered is why no usable answer came (every answer malformed, or a prompt
	// longer than the model's window): the asked directives keep no opinion, and the
	// engine holds them for an operator. Nil otherwise.
	Unanswered error
}

// Opinions asks, in one call, for the second opinions b wants (q.Questions) and sets
// them on b's directives; a directive the model gave no verdict keeps none. It makes no
// call when b wants none. A model that gives no usable answer is not an error (see
// Outcome.Unanswered): what it would have let through is held. Call it before any
// transaction the batch is applied in: no transaction waits on a model.
func (a Asker) Opinions(ctx context.Context, q Questioner, b *memory.Batch) (Outcome, error) {
	qs, err := q.Questions(ctx, b)
	if errors.Is(err, memory.ErrStale) {
		// A candidate is gone (purged, forgotten): the batch is not applied as it is,
		// which its writer learns from Apply, in the transaction that decides it.
		return Outcome{}, nil
	}
	if err != nil || len(qs) == 0 {
		return Outcome{}, err
	}
	out := Outcome{Asked: len(qs)}
	start := time.Now()
	ops, err := a.Ask(ctx, qs)
	out.Duration = time.Since(start)
	switch {
	case llm.IsMalformed(err) || llm.IsContextLength(err):
		out.Unanswered = err
		if a.Logger != nil {
			// The kind of failure only: the model's words stay out of the log, as every
			// answer's do; the whole error at debug.
			a.Logger.WarnContext(ctx, "no usable second opinion; the directives asked about are held", "scope", b.Scope,
				"directives", out.Asked, "error", llm.Kind(err))
			a.Logger.DebugContext(ctx, "no usable second opinion", "scope", b.Scope, "error", err)
		}
		return out, nil
	case err != nil:
		return out, err
	}
	Set(b, qs, ops)
	for _, o := range ops {
		if o != nil && o.Holds {
			out.Holds++
		}
	}
	return out, nil
}

// Ask asks the model about qs in one call and returns an opinion per question, in
// order, nil for one the model gave no verdict. A malformed answer is asked again at
// most Retries times; then the error wraps llm.ErrMalformedOutput. No questions, no
// call.
func (a Asker) Ask(ctx context.Context, qs []memory.Question) ([]*memory.Opinion, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	ds := make([]prompts.Directive, len(qs))
	for i, q := range qs {
		ds[i] = prompts.Directive{Action: string(q.Action), Reason: string(q.Reason), Target: q.Target, Statement: q.Statement,
			Quote: q.Quote}
	}
	system, user, err := a.Prompts.Verification(prompts.Verification{Directives: ds})
	if err != nil {
		return nil, err
	}
	req := llm.SchemaRequest(system, user, prompts.VerificationSchemaName, prompts.VerificationSchema())
	parse := func(content string) ([]*memory.Opinion, error) { return Parse(content, len(qs)) }
	return llm.ChatParsed(ctx, a.Chat, req, a.Retries, parse, a.Observe)
}

// answer is the `verification` schema. Pointers tell a member left out from its zero.
type answer struct {
	Verdicts []verdict `json:"verdicts"`
}

type verdict struct {
	Directive *int   `json:"directive"`
	Why       string `json:"why"`
	Holds     *bool  `json:"holds"`
}

// Parse validates a verification answer about n directives and returns an opinion per
// directive, nil for one without a verdict. Every problem (a directive out of range or
// answered twice, a member missing, a why too long) is an error wrapping
// llm.ErrMalformedOutput; nothing of a malformed answer is used.
func Parse(content string, n int) ([]*memory.Opinion, error) {
	var out answer
	if err := llm.DecodeAnswer(content, MaxAnswerBytes, prompts.VerificationSchemaName, &out); err != nil {
		return nil, err
	}
	if out.Verdicts == nil {
		return nil, llm.Malformedf("verdicts is missing")
	}
	ops := make([]*memory.Opinion, n)
	for i, v := range out.Verdicts {
		d, o, err := v.opinion(n)
		if err != nil {
			return nil, llm.Malformedf("verdicts[%d]: %v", i, err)
		}
		if ops[d] != nil {
			return nil, llm.Malformedf("verdicts[%d]: directive %d is answered twice", i, d)
		}
		ops[d] = o
	}
	return ops, nil
}

func (v verdict) opinion(n int) (int, *memory.Opinion, error) {
	why := strings.TrimSpace(v.Why)
	switch {
	case v.Directive == nil:
		return 0, nil, errors.New("directive is missing")
	case *v.Directive < 0 || *v.Directive >= n:
		return 0, nil, fmt.Errorf("directive %d is not one of the %d lines shown", *v.Directive, n)
	case v.Holds == nil:
		return 0, nil, errors.New("holds is missing")
	// PostgreSQL cannot store NUL in text: asking again is better than failing later.
	case strings.ContainsRune(why, 0):
		return 0, nil, errors.New("why contains a NUL character")
	case utf8.RuneCountInString(why) > MaxWhy:
		return 0, nil, fmt.Errorf("why is %d characters; the limit is %d", utf8.RuneCountInString(why), MaxWhy)
	}
	return *v.Directive, &memory.Opinion{Holds: *v.Holds, Why: why}, nil
}

// Set sets ops[i] as the opinion of qs[i]'s directive in b: a fact's or a
// resolution's, by the question's indices.
func Set(b *memory.Batch, qs []memory.Question, ops []*memory.Opinion) {
	for i, q := range qs[:min(len(qs), len(ops))] {
		switch {
		case q.Fact >= 0 && q.Fact < len(b.Facts):
			b.Facts[q.Fact].Opinion = ops[i]
		case q.Resolution >= 0 && q.Resolution < len(b.Resolutions):
			b.Resolutions[q.Resolution].Opinion = ops[i]
		}
	}
}
