package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/recall"
	"github.com/credohq/credo/transcript"
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
	K        int  `json:"k"`
	Learning bool `json:"learning"`
	// Schema is the throwaway schema; it is gone after the run unless SchemaKept.
	Schema        string       `json:"schema"`
	SchemaKept    bool         `json:"schema_kept"`
	Seconds       float64      `json:"seconds"`
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
	// AnswerFailures counts questions Ask failed on, JudgeFailures answers the judge gave
	// no valid verdict on; both count as wrong.
	AnswerFailures int                  `json:"answer_failures"`
	JudgeFailures  int                  `json:"judge_failures"`
	Samples        []LocomoSampleResult `json:"samples"`
}

// LocomoIngest is what extracting the sessions cost.
type LocomoIngest struct {
	// Sessions are the sessions enqueued, one episode each; Duplicates of them repeated
	// an earlier session of their conversation word for word.
	Sessions   int `json:"sessions"`
	Duplicates int `json:"duplicates"`
	Applied    int `json:"applied"`
	Failed     int `json:"failed"`
	// Pending were never extracted: their job gave up.
	Pending int `json:"pending"`
	// ChatCalls are the extraction calls, answers asked again included.
	ChatCalls           int     `json:"llm_calls"`
	ChatCallsPerSession float64 `json:"llm_calls_per_session"`
	PromptTokens        int     `json:"prompt_tokens"`
	CompletionTokens    int     `json:"completion_tokens"`
	TokensPerSession    float64 `json:"tokens_per_session"`
	// Seconds is from enqueue to the last extraction.
	Seconds           float64 `json:"seconds"`
	SecondsPerSession float64 `json:"seconds_per_session"`
	// Consolidation: one pass per conversation after extraction.
	ConsolidationCalls            int `json:"consolidation_llm_calls"`
	ConsolidationPromptTokens     int `json:"consolidation_prompt_tokens"`
	ConsolidationCompletionTokens int `json:"consolidation_completion_tokens"`
	ConsolidationApplied          int `json:"consolidation_applied"`
}

// LocomoScore is how many questions were answered correctly, as the judge saw it.
type LocomoScore struct {
	Questions int `json:"questions"`
	Correct   int `json:"correct"`
	// Accuracy is Correct / Questions, null without questions.
	Accuracy *float64 `json:"accuracy"`
}

// LocomoCategory is the score of one category.
type LocomoCategory struct {
	Category int    `json:"category"`
	Name     string `json:"name"`
	LocomoScore
}

// LocomoCost is what answering or judging cost, in all and per question asked.
type LocomoCost struct {
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
func RunLocomo(ctx context.Context, samples []LocomoSample, cfg LocomoConfig) (res *LocomoResult, err error) {
	if cfg.Chat == nil || cfg.Embed == nil || cfg.EmbedModel == "" {
		return nil, errors.New("eval: Chat, Embed and EmbedModel are required")
	}
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
	for i := range samples {
		if cfg.Questions > 0 && cfg.Questions < len(samples[i].Questions) {
			samples[i].Questions = samples[i].Questions[:cfg.Questions]
		}
	}
	cfg.Workers = cmp.Or(cfg.Workers, DefaultWorkers)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, DefaultMaxAttempts)
	cfg.JobTimeout = cmp.Or(cfg.JobTimeout, DefaultJobTimeout)
	cfg.K = cmp.Or(cfg.K, recall.DefaultK)
	if cfg.Judge == nil {
		cfg.Judge = cfg.Chat
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	judge, err := NewJudge(cfg.Judge)
	if err != nil {
		return nil, err
	}
	start := time.Now()

	pool, schema, drop, err := createSchema(ctx, cfg.DatabaseURL, int32(min(cfg.Workers+8, 64)))
	if err != nil {
		return nil, err
	}
	res = &LocomoResult{K: cfg.K, Learning: cfg.Learning, Schema: schema, SchemaKept: cfg.Keep, Conversations: len(samples)}
	defer func() {
		if cfg.Keep {
			pool.Close()
			return
		}
		if derr := drop(); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	l := &locomoRun{
		r:       &runner{cfg: cfg.Config, pool: pool, schema: schema, obs: &collector{eps: map[int64]*Episode{}}},
		cfg:     cfg,
		samples: samples,
		judge:   judge,
	}
	if err := l.r.prepare(ctx); err != nil {
		return nil, err
	}
	if err := l.ingest(ctx, &res.Ingest); err != nil {
		return nil, err
	}
	if res.Samples, err = l.ask(ctx, &res.Ingest); err != nil {
		return nil, err
	}
	for _, s := range samples {
		res.Adversarial += s.Adversarial
	}
	res.score()
	res.Seconds = round(time.Since(start).Seconds(), 1)
	return res, nil
}

type locomoRun struct {
	r       *runner
	cfg     LocomoConfig
	samples []LocomoSample
	judge   *Judge
	// episodes are each sample's episode ids, one per session; applied counts those
	// extracted.
	episodes [][]int64
	applied  []int
}

// ingest enqueues every session of every conversation in one transaction and waits
// until every extraction job is done.
func (l *locomoRun) ingest(ctx context.Context, in *LocomoIngest) error {
	stop, err := l.r.start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	var (
		ts   []transcript.Transcript
		from []int
	)
	for i, s := range l.samples {
		for _, ses := range s.Sessions {
			ts = append(ts, ses.Transcript(s.Scope()))
			from = append(from, i)
		}
	}
	l.r.progress("ingesting %d sessions of %d conversations", len(ts), len(l.samples))
	started := time.Now()
	l.episodes = make([][]int64, len(l.samples))
	err = pgx.BeginFunc(ctx, l.r.pool, func(tx pgx.Tx) error {
		res, err := extract.Enqueue(ctx, tx, l.r.client, ts, started)
		if err != nil {
			return err
		}
		in.Duplicates = res.Duplicates
		for j, id := range res.EpisodeIDs {
			l.episodes[from[j]] = append(l.episodes[from[j]], id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	in.Sessions = len(ts)
	if err := l.drain(ctx, len(ts)); err != nil {
		return err
	}
	elapsed := time.Since(started)
	states, err := l.r.episodeStates(ctx)
	if err != nil {
		return err
	}
	seen := map[int64]bool{}
	l.applied = make([]int, len(l.samples))
	for i, ids := range l.episodes {
		for _, id := range ids {
			if seen[id] {
				continue // a duplicate session: one episode
			}
			seen[id] = true
			switch states[id].State {
			case "applied":
				in.Applied++
				l.applied[i]++
			case "failed":
				in.Failed++
			default:
				in.Pending++
			}
			e := l.r.obs.episode(id)
			in.ChatCalls += e.ChatCalls
			in.PromptTokens += e.PromptTokens
			in.CompletionTokens += e.CompletionTokens
		}
	}
	in.Seconds = round(elapsed.Seconds(), 1)
	if in.Sessions > 0 {
		n := float64(in.Sessions)
		in.ChatCallsPerSession = round(float64(in.ChatCalls)/n, 2)
		in.TokensPerSession = round(float64(in.PromptTokens+in.CompletionTokens)/n, 1)
		in.SecondsPerSession = round(elapsed.Seconds()/n, 2)
	}
	l.r.progress("ingest: %d sessions extracted, %d failed, %d left pending, in %s", in.Applied, in.Failed, in.Pending,
		elapsed.Round(100*time.Millisecond))
	return nil
}

// drain waits until no job is waiting, running or due for a retry, telling progress now
// and then how many sessions are extracted.
func (l *locomoRun) drain(ctx context.Context, n int) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	for {
		var left int
		err := l.r.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&left)
		if err != nil {
			return fmt.Errorf("count jobs: %w", err)
		}
		if left == 0 {
			return nil
		}
		if time.Since(last) > 15*time.Second {
			var done int
			if err := l.r.pool.QueryRow(ctx, `SELECT count(*) FROM episode WHERE state <> 'pending'`).Scan(&done); err != nil {
				return fmt.Errorf("count episodes: %w", err)
			}
			l.r.progress("ingest: %d of %d sessions extracted", done, n)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// ask consolidates each conversation's scope and asks its questions, as many scopes at
// once as there are workers.
func (l *locomoRun) ask(ctx context.Context, in *LocomoIngest) ([]LocomoSampleResult, error) {
	total := 0
	for _, s := range l.samples {
		total += len(s.Questions)
	}
	l.r.progress("consolidating %d scopes and asking %d questions", len(l.samples), total)
	results := make([]LocomoSampleResult, len(l.samples))
	errs := make([]error, len(l.samples))
	var mu sync.Mutex
	sem := make(chan struct{}, l.cfg.Workers)
	var wg sync.WaitGroup
	for i := range l.samples {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = l.sample(ctx, i, func(calls, prompt, completion, applied int) {
				mu.Lock()
				defer mu.Unlock()
				in.ConsolidationCalls += calls
				in.ConsolidationPromptTokens += prompt
				in.ConsolidationCompletionTokens += completion
				in.ConsolidationApplied += applied
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return results, nil
}

func (l *locomoRun) sample(ctx context.Context, i int, consolidated func(calls, prompt, completion, applied int)) (LocomoSampleResult, error) {
	s := l.samples[i]
	scope := s.Scope()
	out := LocomoSampleResult{ID: s.ID, Scope: scope, Sessions: len(s.Sessions), Errors: []string{}, Questions: []LocomoAnswer{}}
	out.Applied = l.applied[i]
	// What the last extraction stored waits for the next call's embedding;
	// consolidation clusters embedded beliefs only.
	if err := l.r.embedPending(ctx, scope); err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out.Errors = append(out.Errors, "embed: "+err.Error())
	}
	rep, err := l.r.consolidator.RunScope(ctx, scope)
	consolidated(rep.ChatCalls, rep.PromptTokens, rep.CompletionTokens, rep.Applied)
	if err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out.Errors = append(out.Errors, "consolidate: "+err.Error())
		l.r.progress("%s: consolidation failed: %v", s.ID, err)
	}
	// The questions are asked at the end of the conversation: "today" is its last
	// session's date, which recency is measured from too.
	asOf := s.Sessions[len(s.Sessions)-1].At
	reader, err := recall.New(recall.Config{Store: l.r.store, Chat: l.cfg.Chat, Embed: l.cfg.Embed,
		EmbedModel: l.cfg.EmbedModel, Now: func() time.Time { return asOf }, Logger: l.cfg.Logger})
	if err != nil {
		return out, err
	}
	started := time.Now()
	correct := 0
	for _, q := range s.Questions {
		a, err := l.question(ctx, reader, scope, q)
		if err != nil {
			return out, err
		}
		if a.Verdict == VerdictCorrect {
			correct++
		}
		out.Questions = append(out.Questions, a)
	}
	l.r.progress("%s: %d of %d questions answered correctly, in %s", s.ID, correct, len(s.Questions),
		time.Since(started).Round(100*time.Millisecond))
	return out, nil
}

// question answers q with Ask and has the judge grade the answer. Only ctx's error is
// returned: a failure counts the question as wrong.
func (l *locomoRun) question(ctx context.Context, reader *recall.Reader, scope string, q LocomoQuestion) (LocomoAnswer, error) {
	a := LocomoAnswer{Index: q.Index, Category: q.Category, Question: q.Question, Gold: q.Answer, Verdict: VerdictWrong}
	start := time.Now()
	ans, err := reader.Ask(ctx, recall.Query{Scope: scope, Query: q.Question, K: l.cfg.K})
	a.answerTime = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return a, ctx.Err()
		}
		a.Error = err.Error()
		return a, nil
	}
	a.Answer, a.Beliefs, a.Citations = ans.Answer, len(ans.Beliefs), len(ans.Citations)
	a.answerCalls, a.answerPrompt, a.answerCompletion = ans.ChatCalls, ans.PromptTokens, ans.CompletionTokens
	if len(ans.Beliefs) == 0 {
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
			sc := by[a.Category]
			if sc == nil {
				sc = &LocomoScore{}
				by[a.Category] = sc
			}
			sc.Questions++
			res.Overall.Questions++
			if a.Verdict == VerdictCorrect {
				sc.Correct++
				res.Overall.Correct++
			}
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
		sc.Accuracy = locomoRate(sc.Correct, sc.Questions)
		res.Categories = append(res.Categories, LocomoCategory{Category: c, Name: LocomoCategoryName(c), LocomoScore: sc})
	}
	res.Overall.Accuracy = locomoRate(res.Overall.Correct, res.Overall.Questions)
	res.Answer.finish(res.Overall.Questions, answerTimes)
	res.Judge.finish(res.Overall.Questions, judgeTimes)
}

func (c *LocomoCost) finish(questions int, times []time.Duration) {
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
	if len(times) > 0 {
		s := slices.Clone(times)
		slices.Sort(s)
		v := round(s[max(0, int(math.Ceil(0.95*float64(len(s))))-1)].Seconds(), 3)
		c.P95Seconds = &v
	}
}

// locomoRate is part / whole to four decimals, nil when whole is 0.
func locomoRate(part, whole int) *float64 {
	if whole == 0 {
		return nil
	}
	v := round(float64(part)/float64(whole), 4)
	return &v
}
