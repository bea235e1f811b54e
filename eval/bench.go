package eval

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/recall"
	"github.com/credohq/credo/transcript"
)

// The benchmark runners (LoCoMo, LongMemEval, MemoryAgentBench) share one skeleton,
// bench: every conversation of the benchmark is a scope whose sessions are enqueued
// through the real pipeline and extracted by River, each scope's in date order; then,
// scope by scope and as many at once as there are workers, what the last extraction
// stored is embedded, the scope consolidated once, and its questions asked with
// recall's Ask. Each runner turns its file into benchScopes, and grades the answers
// its benchmark's way. Every call to the model is metered, so that each report can
// set the cost beside the score.

// benchScope is one conversation of a benchmark: a scope and its sessions in order.
type benchScope struct {
	// ID names the conversation in the benchmark's file (a sample_id, a question_id).
	ID       string
	Scope    string
	Sessions []transcript.Transcript
}

// BenchRun is what every benchmark run reports about its schema.
type BenchRun struct {
	K        int  `json:"k"`
	Learning bool `json:"learning"`
	// Schema is the throwaway schema; it is gone after the run unless SchemaKept, and
	// then RunID (the schema's name without SchemaPrefix) goes on with it.
	Schema     string `json:"schema"`
	SchemaKept bool   `json:"schema_kept"`
	RunID      string `json:"run_id"`
	// Resumed says the run went on with a schema kept by an earlier run: its ingest
	// costs count only what this run extracted.
	Resumed bool    `json:"resumed"`
	Seconds float64 `json:"seconds"`
}

// bench runs one benchmark's conversations through the pipeline.
type bench struct {
	r      *runner
	cfg    Config
	meter  *llm.Meter
	scopes []benchScope
	// episodes are each scope's episode ids, one per session; applied counts those
	// extracted.
	episodes [][]int64
	applied  []int
	cost     *costCollector
	run      BenchRun
	started  time.Time
	close    func() error
	// prompts are parsed once for the Reader of every question.
	prompts *prompts.Prompts
}

// openBench applies cfg's defaults, meters its models, opens the run's schema (a new
// one, or the one cfg.RunID names) and prepares the pipeline. close drops the schema
// unless it is kept.
func openBench(ctx context.Context, cfg Config, scopes []benchScope) (*bench, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if len(scopes) == 0 {
		return nil, errors.New("eval: nothing to run")
	}
	cfg = cfg.withDefaults(recall.DefaultK)
	meter := llm.NewMeter(cfg.Chat, cfg.Embed)
	cfg.Chat, cfg.Embed = meter, meter
	p, err := prompts.New()
	if err != nil {
		return nil, err
	}
	b := &bench{cfg: cfg, meter: meter, scopes: scopes, cost: &costCollector{}, started: time.Now(), prompts: p}
	maxConns := int32(min(cfg.Workers+8, 64)) //nolint:gosec // G115: at most 64
	pool, schema, drop, err := openSchema(ctx, cfg.DatabaseURL, maxConns, cfg.RunID)
	if err != nil {
		return nil, err
	}
	b.run = BenchRun{K: cfg.K, Learning: cfg.Learning, Schema: schema, SchemaKept: cfg.Keep, RunID: RunID(schema),
		Resumed: cfg.RunID != ""}
	b.close = func() error {
		if cfg.Keep {
			pool.Close()
			return nil
		}
		return drop()
	}
	b.r = &runner{cfg: cfg, pool: pool, schema: schema, obs: &collector{eps: map[int64]*Episode{}}}
	if err := b.r.prepare(ctx); err != nil {
		return nil, errors.Join(err, b.close())
	}
	switch {
	case b.run.Resumed:
		b.r.progressf("going on with run %s (schema %s)", b.run.RunID, schema)
	case cfg.Keep:
		b.r.progressf("run %s (schema %s, kept: if interrupted, go on with --run %s)", b.run.RunID, schema, b.run.RunID)
	default:
		b.r.progressf("run %s (schema %s, dropped at the end; --keep to go on with it if interrupted)", b.run.RunID, schema)
	}
	return b, nil
}

// benchResult is a runner's result: it reports its run, says where what ingesting
// cost and what the run cost go, and scores its answers.
type benchResult interface {
	setRun(BenchRun)
	costs() (*Ingest, *BenchCost)
	score()
}

// runBench opens the bench for scopes, ingests their sessions, calls ask on each scope
// once it is extracted and consolidated (questions in all), then scores res and sets
// its costs. The bench is closed whatever happens (finishInto); res comes back only
// when all went well.
func runBench[R benchResult](ctx context.Context, cfg Config, scopes []benchScope, questions int, res R,
	ask func(ctx context.Context, b *bench, i int, done scopeDone) error,
) (_ R, err error) {
	var none R
	b, err := openBench(ctx, cfg, scopes)
	if err != nil {
		return none, err
	}
	defer finishInto(b, &res, &err)
	ingest, cost := res.costs()
	if err := b.ingest(ctx, ingest); err != nil {
		return none, err
	}
	err = b.each(ctx, ingest, questions, func(ctx context.Context, i int, done scopeDone) error {
		return ask(ctx, b, i, done)
	})
	if err != nil {
		return none, err
	}
	res.score()
	*cost = b.cost.result()
	return res, nil
}

func (r *BenchRun) setRun(run BenchRun) { *r = run }

// finishInto closes the bench, joining its error to *err, and sets the run on *res
// unless the run failed. Deferred by runBench.
func finishInto[R benchResult](b *bench, res *R, err *error) {
	if cerr := b.close(); cerr != nil {
		*err = errors.Join(*err, cerr)
	}
	b.run.Seconds = round(time.Since(b.started).Seconds(), 1)
	if *err == nil {
		(*res).setRun(b.run)
	}
}

// Ingest is what extracting a benchmark's sessions cost.
type Ingest struct {
	// Sessions are the sessions enqueued, one episode each; Duplicates of them repeated
	// an earlier session of their conversation word for word (or, going on with a kept
	// run, were enqueued by it).
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

// ingest enqueues every session of every scope in one transaction and waits until
// every extraction job is done.
func (b *bench) ingest(ctx context.Context, in *Ingest) error {
	stop, err := b.r.start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	var (
		ts   []transcript.Transcript
		from []int
	)
	for i, s := range b.scopes {
		for _, ses := range s.Sessions {
			ts = append(ts, ses)
			from = append(from, i)
		}
	}
	b.r.progressf("ingesting %d sessions of %d conversations", len(ts), len(b.scopes))
	started := time.Now()
	before := b.meter.Total()
	b.episodes = make([][]int64, len(b.scopes))
	err = pgx.BeginFunc(ctx, b.r.pool, func(tx pgx.Tx) error {
		res, err := extract.Enqueue(ctx, tx, b.r.client, ts, started, nil)
		if err != nil {
			return err
		}
		in.Duplicates = res.Duplicates
		for j, id := range res.EpisodeIDs {
			b.episodes[from[j]] = append(b.episodes[from[j]], id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	in.Sessions = len(ts)
	if err := b.drain(ctx, len(ts)); err != nil {
		return err
	}
	elapsed := time.Since(started)
	states, err := b.r.episodeStates(ctx)
	if err != nil {
		return err
	}
	seen := map[int64]bool{}
	b.applied = make([]int, len(b.scopes))
	extracted := 0
	for i, ids := range b.episodes {
		for _, id := range ids {
			if seen[id] {
				continue // a duplicate session: one episode
			}
			seen[id] = true
			switch states[id].State {
			case memory.EpisodeApplied:
				in.Applied++
				b.applied[i]++
			case memory.EpisodeFailed:
				in.Failed++
			default:
				in.Pending++
			}
			e := b.r.obs.episode(id)
			if e.Attempts > 0 {
				extracted++
			}
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
	b.cost.ingested(extracted, in.ChatCalls, b.meter.Total().Sub(before))
	b.r.progressf("ingest: %d sessions extracted, %d failed, %d left pending, in %s", in.Applied, in.Failed, in.Pending,
		elapsed.Round(100*time.Millisecond))
	return nil
}

// drain waits until no job is waiting, running or due for a retry, showing how many
// sessions are extracted: on a bar, or a line now and then.
func (b *bench) drain(ctx context.Context, n int) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	bar := newProgressBar(ctx, b.cfg.Bar, "sessions extracted", n)
	defer bar.finish()
	last := time.Now()
	for {
		left, err := b.r.jobsLeft(ctx)
		if err != nil {
			return err
		}
		backlog, err := b.r.store.Backlog(ctx)
		if err != nil {
			return err
		}
		bar.set(n - backlog.Pending)
		if left == 0 {
			return nil
		}
		if bar.off() && time.Since(last) > 15*time.Second {
			b.r.progressf("ingest: %d of %d sessions extracted", n-backlog.Pending, n)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// scopeDone is what readying one scope found: its errors, and what consolidation did.
type scopeDone struct {
	Errors []string
	consolidation
}

type consolidation struct{ calls, prompt, completion, applied int }

// each readies every scope (what its last extraction stored embedded, one
// consolidation pass, the memory it holds measured) and calls fn on it, as many scopes
// at once as there are workers; questions is how many fn will ask in all, for the
// progress bar. Only ctx's errors and fn's stop the run.
func (b *bench) each(ctx context.Context, in *Ingest, questions int, fn func(ctx context.Context, i int, done scopeDone) error) error {
	b.r.progressf("consolidating %d scopes and asking %d questions", len(b.scopes), questions)
	bar := newProgressBar(ctx, b.cfg.Bar, "questions asked", questions)
	defer bar.finish()
	b.cost.bar = bar
	var mu sync.Mutex
	errs := make([]error, len(b.scopes))
	parallel(len(b.scopes), b.cfg.Workers, func(i int) {
		done, err := b.ready(ctx, b.scopes[i])
		if err != nil {
			errs[i] = err
			return
		}
		mu.Lock()
		in.ConsolidationCalls += done.calls
		in.ConsolidationPromptTokens += done.prompt
		in.ConsolidationCompletionTokens += done.completion
		in.ConsolidationApplied += done.applied
		mu.Unlock()
		errs[i] = fn(ctx, i, done)
	})
	return errors.Join(errs...)
}

// parallel calls fn for each of 0 to n-1, at most workers at a time, and returns when
// all have returned.
func parallel(n, workers int, fn func(i int)) {
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

// ready embeds what the scope's last extraction stored, consolidates it once and
// measures the memory it holds. Failures other than ctx's are the scope's errors.
func (b *bench) ready(ctx context.Context, s benchScope) (scopeDone, error) {
	var (
		done  scopeDone
		tally llm.Tally
	)
	tctx := llm.CountInto(ctx, &tally)
	// What the last extraction stored waits for the next call's embedding;
	// consolidation clusters embedded beliefs only.
	if err := b.r.embedPending(tctx, s.Scope); err != nil {
		if ctx.Err() != nil {
			return done, ctx.Err()
		}
		done.Errors = append(done.Errors, "embed: "+err.Error())
	}
	rep, err := b.r.consolidator.RunScope(tctx, s.Scope)
	done.consolidation = consolidation{rep.ChatCalls, rep.PromptTokens, rep.CompletionTokens, rep.Applied}
	if err != nil {
		if ctx.Err() != nil {
			return done, ctx.Err()
		}
		done.Errors = append(done.Errors, "consolidate: "+err.Error())
		b.scopeNotef("%s: consolidation failed: %v", s.ID, err)
	}
	beliefs, err := b.r.store.All(ctx, s.Scope)
	if err != nil {
		return done, err
	}
	b.cost.scope(tally.Counts(), beliefs)
	return done, nil
}

// scopeNotef tells progressf what one scope came to, unless a bar shows the progress: a
// line written under a bar that redraws itself would garble both.
func (b *bench) scopeNotef(format string, args ...any) {
	if b.cfg.Bar == nil {
		b.r.progressf(format, args...)
	}
}

// asked is one question's answer and what it cost.
type asked struct {
	Answer    string
	Beliefs   int
	Citations int
	// Counts are Ask's calls: the question embedded, the answer and its retries.
	Counts llm.Counts
	// Err says why Ask failed; ctx's errors are returned instead.
	Err error
}

// ask answers question from scope's memory with recall's Ask, today being today, and
// records what it cost.
func (b *bench) ask(ctx context.Context, scope, question string, today time.Time) (asked, error) {
	var a asked
	reader, err := recall.New(recall.Config{Store: b.r.store, Chat: b.cfg.Chat, Embed: b.cfg.Embed,
		EmbedModel: b.cfg.EmbedModel, Now: func() time.Time { return today }, Logger: b.cfg.Logger, Prompts: b.prompts})
	if err != nil {
		return a, err
	}
	var tally llm.Tally
	start := time.Now()
	ans, err := reader.Ask(llm.CountInto(ctx, &tally), recall.Query{Scope: scope, Query: question, K: b.cfg.K})
	total := time.Since(start)
	a.Counts = tally.Counts()
	if err != nil {
		if ctx.Err() != nil {
			return a, ctx.Err()
		}
		a.Err = err
		b.cost.question(questionCost{counts: a.Counts, total: total})
		return a, nil
	}
	a.Answer, a.Beliefs, a.Citations = ans.Answer, len(ans.Beliefs), len(ans.Citations)
	b.cost.question(questionCost{counts: a.Counts, read: ans.Read, total: total, context: beliefTokens(ans.Beliefs, true)})
	return a, nil
}

// beliefTokens estimates the tokens of the beliefs' statements, of the current ones
// only unless history.
func beliefTokens(bs []memory.Belief, history bool) int {
	n := 0
	for _, bl := range bs {
		if history || bl.Status == memory.StatusActive {
			n += approxTokens(bl.Statement)
		}
	}
	return n
}

// approxTokens estimates the tokens of s as a quarter of its bytes, rounded up: the
// usual rule for English with the tokenizers of today's models, and no tokenizer of
// the model's own is at hand.
func approxTokens(s string) int { return (len(s) + 3) / 4 }
