package recall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/transcript"
)

// ErrModel wraps a chat model's failure to answer, or to answer validly after the
// retries: nothing was answered.
var ErrModel = errors.New("the chat model did not answer")

// NothingKnown is the answer from a memory that holds nothing for the question: no
// model is asked.
const NothingKnown = "Memory holds nothing about this yet."

// Limits on one answer.
const (
	maxAnswerBytes = 64 << 10
	maxAnswerLen   = 4000
)

// Answer is a short answer to a question, with the beliefs it rests on.
type Answer struct {
	Answer string `json:"answer"`
	// Citations are the ids of the beliefs the answer rests on, among Beliefs.
	Citations []int64 `json:"citations"`
	// Beliefs are the beliefs the model was shown.
	Beliefs []memory.Belief `json:"beliefs"`
	// ChatCalls counts model calls, answers asked again included.
	ChatCalls        int `json:"llm_calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Read is how long choosing the beliefs took (the question embedded, memory read
	// and ranked), without the model's answer: the read latency benchmarks report.
	Read time.Duration `json:"-"`
}

// Ask answers question from scope's memory in one chat call over the recalled beliefs
// (with what no longer holds, for a question about the past), rendered as "[N] " lines
// as in extraction. A malformed answer, a citation out of range included, is asked
// again; a memory that holds nothing for the question is answered without a call.
func (r *Reader) Ask(ctx context.Context, q Query) (*Answer, error) {
	start := time.Now()
	out, err := r.ask(ctx, q)
	if r.cfg.Observer != nil {
		rep := Report{Duration: time.Since(start), Err: err}
		if out != nil {
			rep.ChatCalls, rep.PromptTokens, rep.CompletionTokens = out.ChatCalls, out.PromptTokens, out.CompletionTokens
		}
		r.cfg.Observer.Answered(rep)
	}
	return out, err
}

func (r *Reader) ask(ctx context.Context, q Query) (*Answer, error) {
	pending, err := r.checkQuery(ctx, &q)
	if err != nil {
		return nil, err
	}
	if q.Query == "" {
		return nil, transcript.InputErrorf(ErrQuery, "", "the question is empty")
	}
	if r.cfg.Chat == nil {
		return nil, errors.New("recall: Ask needs Chat")
	}
	start := time.Now()
	sel, err := r.selectFor(ctx, q, pending)
	if err != nil {
		return nil, err
	}
	shown := slices.Concat(sel.holding, sel.earlier)
	out := &Answer{Answer: NothingKnown, Citations: []int64{}, Beliefs: shown, Read: time.Since(start)}
	if len(shown) == 0 {
		out.Beliefs = []memory.Belief{}
		return out, nil
	}
	known := make([]prompts.Known, len(shown))
	for i, b := range shown {
		known[i] = prompts.Known{Statement: b.Statement, ValidFrom: b.ValidFrom, ValidUntil: b.ValidUntil, Inherited: b.Scope != q.Scope}
	}
	today := r.cfg.Now()
	if q.AsOf != nil {
		today = *q.AsOf
	}
	system, user, err := r.prompts.Answer(prompts.Answer{Scope: q.Scope, Today: today, Question: q.Query, Beliefs: known})
	if err != nil {
		return nil, err
	}
	req := llm.SchemaRequest(system, user, prompts.AnswerSchemaName, prompts.AnswerSchema())
	parsed, err := llm.ChatParsed(ctx, r.cfg.Chat, req, r.cfg.MalformedRetries,
		func(content string) (parsedAnswer, error) { return parseAnswer(content, len(shown)) },
		func(a llm.Attempt) {
			out.ChatCalls++
			out.PromptTokens += a.Response.Usage.PromptTokens
			out.CompletionTokens += a.Response.Usage.CompletionTokens
			if a.Retrying {
				r.log.WarnContext(ctx, "malformed answer, asking again", "scope", q.Scope, "error", llm.Kind(a.Err))
				r.log.DebugContext(ctx, "malformed answer", "scope", q.Scope, "error", a.Err)
			}
		})
	if err != nil {
		return nil, fmt.Errorf("%w: answer a question of %q: %w", ErrModel, q.Scope, err)
	}
	out.Answer = parsed.answer
	for _, i := range parsed.citations {
		out.Citations = append(out.Citations, shown[i].ID)
	}
	return out, nil
}

// parsedAnswer is a validated `answer`: citations index the beliefs shown.
type parsedAnswer struct {
	answer    string
	citations []int
}

// parseAnswer validates an answer about n beliefs. Every problem wraps
// llm.ErrMalformedOutput, so the question is asked again.
func parseAnswer(content string, n int) (parsedAnswer, error) {
	var out struct {
		Reasoning string  `json:"reasoning"`
		Answer    *string `json:"answer"`
		Citations []int   `json:"citations"`
	}
	if err := llm.DecodeAnswer(content, maxAnswerBytes, "answer", &out); err != nil {
		return parsedAnswer{}, err
	}
	if out.Answer == nil || strings.TrimSpace(*out.Answer) == "" {
		return parsedAnswer{}, llm.Malformedf("answer is missing")
	}
	a := strings.TrimSpace(*out.Answer)
	if !utf8.ValidString(a) || strings.ContainsRune(a, 0) || utf8.RuneCountInString(a) > maxAnswerLen {
		return parsedAnswer{}, llm.Malformedf("answer is not text of at most %d characters", maxAnswerLen)
	}
	var cites []int
	for _, c := range out.Citations {
		if c < 0 || c >= n {
			return parsedAnswer{}, llm.Malformedf("citation %d is not one of the %d beliefs shown", c, n)
		}
		if !slices.Contains(cites, c) {
			cites = append(cites, c)
		}
	}
	return parsedAnswer{answer: a, citations: cites}, nil
}
