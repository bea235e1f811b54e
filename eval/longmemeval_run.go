package eval

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/credohq/credo/llm"
)

// LongMemEvalConfig configures RunLongMemEval.
type LongMemEvalConfig struct {
	// Config holds the pipeline's settings, as for RunLocomo.
	Config
	// Judge grades the answers with LongMemEval's prompts (Chat when nil).
	Judge llm.Chatter
}

// LongMemEvalResult is the outcome of RunLongMemEval.
type LongMemEvalResult struct {
	BenchRun
	Ingest Ingest `json:"ingest"`
	// Types are the question types, knowledge-update first, each with its questions'
	// score (abstention questions included, as LongMemEval counts them).
	Types []LongMemEvalTypeScore `json:"types"`
	// Overall is every question; TaskAveraged the mean of the types' accuracies, over
	// the types asked; Abstention the "_abs" questions alone.
	Overall      QAScore  `json:"overall"`
	TaskAveraged *float64 `json:"task_averaged_accuracy"`
	Abstention   QAScore  `json:"abstention"`
	// Judge is what grading cost, per question.
	Judge CallCost `json:"judge"`
	// Cost is what the run cost, beside its score.
	Cost BenchCost `json:"cost"`
	// AnswerFailures counts questions Ask failed on, JudgeFailures answers the judge gave
	// no verdict on; both count as wrong.
	AnswerFailures int                 `json:"answer_failures"`
	JudgeFailures  int                 `json:"judge_failures"`
	Questions      []LongMemEvalAnswer `json:"questions"`
}

// LongMemEvalTypeScore is the score of one question type.
type LongMemEvalTypeScore struct {
	Type string `json:"type"`
	QAScore
}

// LongMemEvalAnswer is one question, its answer and the judge's verdict.
type LongMemEvalAnswer struct {
	ID         string `json:"question_id"`
	Type       string `json:"question_type"`
	Abstention bool   `json:"abstention"`
	Scope      string `json:"scope"`
	Sessions   int    `json:"sessions"`
	Applied    int    `json:"applied"`
	Question   string `json:"question"`
	Gold       string `json:"gold"`
	Answer     string `json:"answer"`
	Verdict    string `json:"verdict"`
	// Judgment is what the judge answered.
	Judgment string `json:"judgment"`
	// Beliefs were shown to answer, Citations of them cited.
	Beliefs   int `json:"beliefs"`
	Citations int `json:"citations"`
	// Errors are failures around the question (embedding, consolidation); Error says
	// why no answer was given, JudgeError why no verdict was.
	Errors     []string `json:"errors"`
	Error      string   `json:"error,omitempty"`
	JudgeError string   `json:"judge_error,omitempty"`

	judge Judgment
}

// RunLongMemEval ingests each question's history into a scope of its own
// (LongMemEvalScopePrefix + question_id) through the real pipeline, one session an
// episode dated by its haystack_date; once all are extracted, each scope is
// consolidated and asked its question with recall's Ask as of its question_date, and
// the judge grades the answer with LongMemEval's own prompt for its type. The schema is
// dropped at the end unless cfg.Keep.
func RunLongMemEval(ctx context.Context, questions []LongMemEvalQuestion, cfg LongMemEvalConfig) (*LongMemEvalResult, error) {
	if len(questions) == 0 {
		return nil, errors.New("eval: no LongMemEval questions")
	}
	judge := cmp.Or[llm.Chatter](cfg.Judge, cfg.Chat)
	scopes := make([]benchScope, len(questions))
	for i, q := range questions {
		scopes[i] = benchScope{ID: q.ID, Scope: q.Scope()}
		for _, s := range q.Sessions {
			scopes[i].Sessions = append(scopes[i].Sessions, s.Transcript(q.Scope()))
		}
	}
	res := &LongMemEvalResult{Questions: make([]LongMemEvalAnswer, len(questions))}
	return runBench(ctx, cfg.Config, scopes, len(questions), res, func(ctx context.Context, b *bench, i int, done scopeDone) error {
		q := questions[i]
		a := LongMemEvalAnswer{ID: q.ID, Type: q.Type, Abstention: q.Abstention, Scope: q.Scope(), Sessions: len(q.Sessions),
			Applied: b.applied[i], Question: q.Question, Gold: q.Answer, Verdict: VerdictWrong, Errors: append([]string{}, done.Errors...)}
		ans, err := b.ask(ctx, a.Scope, q.Question, q.At)
		if err != nil {
			return err
		}
		if ans.Err != nil {
			a.Error = ans.Err.Error()
			res.Questions[i] = a
			return nil //nolint:nilerr // the question's failure is its answer's, and the run goes on
		}
		a.Answer, a.Beliefs, a.Citations = ans.Answer, ans.Beliefs, ans.Citations
		// Even an answer from an empty memory is judged: it may rightly abstain.
		if a.judge, err = GradeLongMemEval(ctx, judge, q, ans.Answer); err != nil {
			return err
		}
		a.Verdict, a.Judgment = a.judge.Verdict, a.judge.Reasoning
		if a.judge.Err != nil {
			a.JudgeError = a.judge.Err.Error()
		}
		res.Questions[i] = a
		b.scopeNotef("%s (%s): %s", q.ID, q.Type, a.Verdict)
		return nil
	})
}

func (res *LongMemEvalResult) costs() (*Ingest, *BenchCost) { return &res.Ingest, &res.Cost }

// score fills the scores and the judge's cost from the answers.
func (res *LongMemEvalResult) score() {
	by := map[string]*QAScore{}
	var judgeTimes []time.Duration
	for _, a := range res.Questions {
		sc := entry(by, a.Type)
		correct := a.Verdict == VerdictCorrect
		sc.add(correct)
		res.Overall.add(correct)
		if a.Abstention {
			res.Abstention.add(correct)
		}
		if a.Error != "" {
			res.AnswerFailures++
		}
		if a.JudgeError != "" {
			res.JudgeFailures++
		}
		res.Judge.ChatCalls += a.judge.ChatCalls
		res.Judge.PromptTokens += a.judge.PromptTokens
		res.Judge.CompletionTokens += a.judge.CompletionTokens
		if a.judge.ChatCalls > 0 {
			judgeTimes = append(judgeTimes, a.judge.Duration)
		}
	}
	res.Types = []LongMemEvalTypeScore{}
	var sum float64
	asked := 0
	for _, t := range LongMemEvalTypes {
		sc := QAScore{}
		if by[t] != nil {
			sc = *by[t]
		}
		sc.finish()
		if sc.Accuracy != nil {
			sum += *sc.Accuracy
			asked++
		}
		res.Types = append(res.Types, LongMemEvalTypeScore{Type: t, QAScore: sc})
	}
	if asked > 0 {
		v := round(sum/float64(asked), 4)
		res.TaskAveraged = &v
	}
	res.Overall.finish()
	res.Abstention.finish()
	res.Judge.finish(res.Overall.Questions, judgeTimes)
}
