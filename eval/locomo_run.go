package eval

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/credohq/credo/llm"
)

// LocomoConfig configures RunLocomo.
type LocomoConfig struct {
	// Config holds the pipeline's settings, as for Run, except K: how many beliefs each
	// question is answered from (recall.DefaultK when 0).
	Config
	// Judge grades the answers (Chat when nil).
	Judge llm.Chatter
	// Conversations keeps the first N samples, Questions the first N questions of
	// categories 1 to 4 of each; 0 keeps all.
	Conversations int
	Questions     int
}

// LocomoResult is the outcome of RunLocomo.
type LocomoResult struct {
	BenchRun
	Conversations int          `json:"conversations"`
	Ingest        LocomoIngest `json:"ingest"`
	// Categories are 1 to 4, in order; Overall is all of them.
	Categories []LocomoCategory `json:"categories"`
	Overall    LocomoScore      `json:"overall"`
	// Adversarial counts the category 5 questions of the conversations run, left out.
	Adversarial int `json:"adversarial_left_out"`
	// Answer is what answering cost (recall's Ask), Judge what grading cost, both per
	// question asked.
	Answer LocomoCost `json:"answer"`
	Judge  LocomoCost `json:"judge"`
	// Cost is what the run cost, beside its score.
	Cost BenchCost `json:"cost"`
	// AnswerFailures counts questions Ask failed on, JudgeFailures answers the judge gave
	// no valid verdict on; both count as wrong.
	AnswerFailures int                  `json:"answer_failures"`
	JudgeFailures  int                  `json:"judge_failures"`
	Samples        []LocomoSampleResult `json:"samples"`
}

// LocomoIngest is what extracting the sessions cost.
type LocomoIngest = Ingest

// LocomoScore is how many questions were answered correctly, as the judge saw it.
type LocomoScore = QAScore

// QAScore is how many questions were answered correctly.
type QAScore struct {
	Questions int `json:"questions"`
	Correct   int `json:"correct"`
	// Accuracy is Correct / Questions, null without questions.
	Accuracy *float64 `json:"accuracy"`
}

// add counts one question.
func (s *QAScore) add(correct bool) {
	s.Questions++
	if correct {
		s.Correct++
	}
}

// finish sets the accuracy.
func (s *QAScore) finish() { s.Accuracy = locomoRate(s.Correct, s.Questions) }

// LocomoCategory is the score of one category.
type LocomoCategory struct {
	Category int    `json:"category"`
	Name     string `json:"name"`
	LocomoScore
}

// LocomoCost is what answering or judging cost, in all and per question asked.
type LocomoCost = CallCost

// CallCost is what answering or judging cost, in all and per question asked.
type CallCost struct {
	ChatCalls                   int      `json:"llm_calls"`
	PromptTokens                int      `json:"prompt_tokens"`
	CompletionTokens            int      `json:"completion_tokens"`
	Seconds                     float64  `json:"seconds"`
	CallsPerQuestion            float64  `json:"llm_calls_per_question"`
	PromptTokensPerQuestion     float64  `json:"prompt_tokens_per_question"`
	CompletionTokensPerQuestion float64  `json:"completion_tokens_per_question"`
	SecondsPerQuestion          float64  `json:"seconds_per_question"`
	P95Seconds                  *float64 `json:"p95_seconds"`
}

// LocomoSampleResult is one conversation's outcome.
type LocomoSampleResult struct {
	ID       string `json:"sample_id"`
	Scope    string `json:"scope"`
	Sessions int    `json:"sessions"`
	Applied  int    `json:"applied"`
	// Errors are failures around the questions (embedding, consolidation).
	Errors    []string       `json:"errors"`
	Questions []LocomoAnswer `json:"questions"`
}

// LocomoAnswer is one question, its answer and the judge's verdict.
type LocomoAnswer struct {
	Index     int    `json:"qa_index"`
	Category  int    `json:"category"`
	Question  string `json:"question"`
	Gold      string `json:"gold"`
	Answer    string `json:"answer"`
	Verdict   string `json:"verdict"`
	Reasoning string `json:"reasoning"`
	// Beliefs were shown to answer, Citations of them cited.
	Beliefs   int `json:"beliefs"`
	Citations int `json:"citations"`
	// Error says why no answer was given; JudgeError why no verdict was.
	Error      string `json:"error,omitempty"`
	JudgeError string `json:"judge_error,omitempty"`

	answerCalls, answerPrompt, answerCompletion int
	judgeCalls, judgePrompt, judgeCompletion    int
	answerTime, judgeTime                       time.Duration
}

// RunLocomo ingests LoCoMo conversations through the real pipeline in a new schema of
// cfg.DatabaseURL, asks their questions of categories 1 to 4 with recall's Ask, and
// has the judge grade each answer against the gold one. Each conversation is a scope
// (LocomoScopePrefix + sample_id), each session a transcript dated by its
// session_N_date_time; all are enqueued at once and extracted to the last, each scope's
// sessions in date order, then each scope is consolidated once and asked its questions,
// as of its last session's date. The schema is dropped at the end unless cfg.Keep.
func RunLocomo(ctx context.Context, samples []LocomoSample, cfg LocomoConfig) (*LocomoResult, error) {
	if cfg.Conversations < 0 || cfg.Questions < 0 {
		return nil, errors.New("eval: Conversations and Questions may not be negative")
	}
	if cfg.Conversations > 0 && cfg.Conversations < len(samples) {
		samples = samples[:cfg.Conversations]
	}
	if len(samples) == 0 {
		return nil, errors.New("eval: no LoCoMo conversations")
	}
	samples = slices.Clone(samples)
	scopes := make([]benchScope, len(samples))
	for i := range samples {
		if cfg.Questions > 0 && cfg.Questions < len(samples[i].Questions) {
			samples[i].Questions = samples[i].Questions[:cfg.Questions]
		}
		s := samples[i]
		scopes[i] = benchScope{ID: s.ID, Scope: s.Scope()}
		for _, ses := range s.Sessions {
			scopes[i].Sessions = append(scopes[i].Sessions, ses.Transcript(s.Scope()))
		}
	}
	judge, err := NewJudge(cmp.Or[llm.Chatter](cfg.Judge, cfg.Chat))
	if err != nil {
		return nil, err
	}
	res := &LocomoResult{Conversations: len(samples), Samples: make([]LocomoSampleResult, len(samples))}
	total := 0
	for _, s := range samples {
		total += len(s.Questions)
		res.Adversarial += s.Adversarial
	}
	l := &locomoRun{samples: samples, judge: judge}
	return runBench(ctx, cfg.Config, scopes, total, res, func(ctx context.Context, b *bench, i int, done scopeDone) (err error) {
		res.Samples[i], err = l.sample(ctx, b, i, done)
		return err
	})
}

func (res *LocomoResult) costs() (*Ingest, *BenchCost) { return &res.Ingest, &res.Cost }

type locomoRun struct {
	samples []LocomoSample
	judge   *Judge
}

// sample asks a conversation's questions, as of its last session's date.
func (l *locomoRun) sample(ctx context.Context, b *bench, i int, done scopeDone) (LocomoSampleResult, error) {
	s := l.samples[i]
	out := LocomoSampleResult{ID: s.ID, Scope: s.Scope(), Sessions: len(s.Sessions), Applied: b.applied[i],
		Errors: append([]string{}, done.Errors...), Questions: []LocomoAnswer{}}
	// The questions are asked at the end of the conversation: "today" is its last
	// session's date, which recency is measured from too.
	asOf := s.Sessions[len(s.Sessions)-1].At
	started := time.Now()
	correct := 0
	for _, q := range s.Questions {
		a, err := l.question(ctx, b, out.Scope, q, asOf)
		if err != nil {
			return out, err
		}
		if a.Verdict == VerdictCorrect {
			correct++
		}
		out.Questions = append(out.Questions, a)
	}
	b.scopeNotef("%s: %d of %d questions answered correctly, in %s", s.ID, correct, len(s.Questions),
		time.Since(started).Round(100*time.Millisecond))
	return out, nil
}

// question answers q with Ask and has the judge grade the answer. Only ctx's error is
// returned: a failure counts the question as wrong.
func (l *locomoRun) question(ctx context.Context, b *bench, scope string, q LocomoQuestion, asOf time.Time) (LocomoAnswer, error) {
	a := LocomoAnswer{Index: q.Index, Category: q.Category, Question: q.Question, Gold: q.Answer, Verdict: VerdictWrong}
	start := time.Now()
	ans, err := b.ask(ctx, scope, q.Question, asOf)
	a.answerTime = time.Since(start)
	if err != nil {
		return a, err
	}
	if ans.Err != nil {
		a.Error = ans.Err.Error()
		return a, nil //nolint:nilerr // the question's failure is its answer's, and the run goes on
	}
	a.Answer, a.Beliefs, a.Citations = ans.Answer, ans.Beliefs, ans.Citations
	a.answerCalls, a.answerPrompt, a.answerCompletion = ans.Counts.ChatCalls, ans.Counts.ChatPromptTokens, ans.Counts.ChatCompletionTokens
	if ans.Beliefs == 0 {
		// No gold answer of categories 1 to 4 is "nothing": no judge needed.
		a.Reasoning = "memory held nothing for the question; not judged"
		return a, nil
	}
	j, err := l.judge.Grade(ctx, q.Question, q.Answer, ans.Answer)
	a.judgeCalls, a.judgePrompt, a.judgeCompletion, a.judgeTime = j.ChatCalls, j.PromptTokens, j.CompletionTokens, j.Duration
	if err != nil {
		return a, err
	}
	a.Verdict, a.Reasoning = j.Verdict, j.Reasoning
	if j.Err != nil {
		a.JudgeError = j.Err.Error()
	}
	return a, nil
}

// score fills the scores and costs from the answers.
func (res *LocomoResult) score() {
	by := map[int]*LocomoScore{}
	var answerTimes, judgeTimes []time.Duration
	for _, s := range res.Samples {
		for _, a := range s.Questions {
			sc := entry(by, a.Category)
			sc.add(a.Verdict == VerdictCorrect)
			res.Overall.add(a.Verdict == VerdictCorrect)
			if a.Error != "" {
				res.AnswerFailures++
			}
			if a.JudgeError != "" {
				res.JudgeFailures++
			}
			res.Answer.ChatCalls += a.answerCalls
			res.Answer.PromptTokens += a.answerPrompt
			res.Answer.CompletionTokens += a.answerCompletion
			answerTimes = append(answerTimes, a.answerTime)
			res.Judge.ChatCalls += a.judgeCalls
			res.Judge.PromptTokens += a.judgePrompt
			res.Judge.CompletionTokens += a.judgeCompletion
			if a.judgeCalls > 0 {
				judgeTimes = append(judgeTimes, a.judgeTime)
			}
		}
	}
	res.Categories = []LocomoCategory{}
	for _, c := range LocomoCategories {
		sc := LocomoScore{}
		if by[c] != nil {
			sc = *by[c]
		}
		sc.finish()
		res.Categories = append(res.Categories, LocomoCategory{Category: c, Name: LocomoCategoryName(c), LocomoScore: sc})
	}
	res.Overall.finish()
	res.Answer.finish(res.Overall.Questions, answerTimes)
	res.Judge.finish(res.Overall.Questions, judgeTimes)
}

func (c *CallCost) finish(questions int, times []time.Duration) {
	var sum time.Duration
	for _, t := range times {
		sum += t
	}
	c.Seconds = round(sum.Seconds(), 3)
	if questions == 0 {
		return
	}
	n := float64(questions)
	c.CallsPerQuestion = round(float64(c.ChatCalls)/n, 2)
	c.PromptTokensPerQuestion = round(float64(c.PromptTokens)/n, 1)
	c.CompletionTokensPerQuestion = round(float64(c.CompletionTokens)/n, 1)
	c.SecondsPerQuestion = round(sum.Seconds()/n, 3)
	c.P95Seconds = percentileSeconds(times, 0.95)
}

// locomoRate is part / whole to four decimals, nil when whole is 0.
func locomoRate(part, whole int) *float64 {
	if whole == 0 {
		return nil
	}
	v := round(float64(part)/float64(whole), 4)
	return &v
}
