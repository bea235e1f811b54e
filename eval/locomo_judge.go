package eval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/prompts"
)

// Verdicts of the judge.
const (
	VerdictCorrect = "CORRECT"
	VerdictWrong   = "WRONG"
)

// JudgeRetries is how often a malformed judgment is asked again.
const JudgeRetries = 2

// maxJudgmentBytes bounds one judgment.
const maxJudgmentBytes = 16 << 10

// Judgment is the judge's verdict on one answer, with what it cost.
type Judgment struct {
	// Verdict is VerdictCorrect or VerdictWrong; WRONG when the judge failed.
	Verdict   string
	Reasoning string
	// Err says why the judge gave no valid verdict (its answers stayed malformed, or the
	// model failed): the answer counts as wrong.
	Err              error
	ChatCalls        int
	PromptTokens     int
	CompletionTokens int
	Duration         time.Duration
}

// Correct says whether the judge found the answer correct.
func (j Judgment) Correct() bool { return j.Verdict == VerdictCorrect }

// Judge grades answers against gold ones with a chat model: LLM-as-judge, the metric the
// LoCoMo literature reports (Mem0's paper, arXiv 2504.19413, section 3.2).
type Judge struct {
	Chat    llm.Chatter
	prompts *prompts.Prompts
}

// NewJudge returns a judge asking chat.
func NewJudge(chat llm.Chatter) (*Judge, error) {
	if chat == nil {
		return nil, errors.New("eval: the judge needs a chat model")
	}
	p, err := prompts.New()
	if err != nil {
		return nil, err
	}
	return &Judge{Chat: chat, prompts: p}, nil
}

// Grade asks whether answer says what gold says, in one call of the `judgment` schema; a
// malformed judgment is asked again up to JudgeRetries times. A judge that still gives
// no valid verdict, or fails, makes the judgment WRONG with Err set. The error returned
// is only ctx's.
func (j *Judge) Grade(ctx context.Context, question, gold, answer string) (Judgment, error) {
	start := time.Now()
	out := Judgment{Verdict: VerdictWrong}
	system, user, err := j.prompts.Judge(prompts.Judge{Question: question, Gold: gold, Answer: answer})
	if err != nil {
		return out, err
	}
	req := llm.ChatRequest{
		Messages:   []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}},
		SchemaName: prompts.JudgeSchemaName,
		Schema:     prompts.JudgeSchema(),
	}
	parsed, err := llm.ChatParsed(ctx, j.Chat, req, JudgeRetries, parseJudgment, func(a llm.Attempt) {
		out.ChatCalls++
		out.PromptTokens += a.Response.Usage.PromptTokens
		out.CompletionTokens += a.Response.Usage.CompletionTokens
	})
	out.Duration = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out.Err = err
		return out, nil
	}
	out.Verdict, out.Reasoning = parsed.Verdict, parsed.Reasoning
	return out, nil
}

type parsedJudgment struct {
	Reasoning string
	Verdict   string
}

// parseJudgment validates a judgment. Every problem wraps llm.ErrMalformedOutput, so the
// judge is asked again. The verdict is read in any case: "correct" is CORRECT.
func parseJudgment(content string) (parsedJudgment, error) {
	malformed := func(format string, args ...any) (parsedJudgment, error) {
		return parsedJudgment{}, fmt.Errorf("%w: %s", llm.ErrMalformedOutput, fmt.Sprintf(format, args...))
	}
	var out struct {
		Reasoning string  `json:"reasoning"`
		Verdict   *string `json:"verdict"`
	}
	if err := llm.DecodeAnswer(content, maxJudgmentBytes, "judgment", &out); err != nil {
		return parsedJudgment{}, err
	}
	if out.Verdict == nil {
		return malformed("verdict is missing")
	}
	v := strings.ToUpper(strings.TrimSpace(*out.Verdict))
	if v != VerdictCorrect && v != VerdictWrong {
		return malformed("verdict %q is neither %s nor %s", *out.Verdict, VerdictCorrect, VerdictWrong)
	}
	return parsedJudgment{Reasoning: strings.TrimSpace(out.Reasoning), Verdict: v}, nil
}
