package eval

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/credohq/credo/consolidate"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/learning"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/migrations"
	"github.com/credohq/credo/transcript"
)

// Defaults of Config.
const (
	DefaultK           = 3
	DefaultWorkers     = 4
	DefaultMaxAttempts = 3
	DefaultJobTimeout  = 5 * time.Minute
)

// SchemaPrefix starts the name of every throwaway schema.
const SchemaPrefix = "credo_eval_"

// Config configures Run.
type Config struct {
	// DatabaseURL is the database where the throwaway schema is created and dropped.
	DatabaseURL string
	Chat        llm.Chatter
	Embed       llm.Embedder
	// EmbedModel is the name vectors are stored under.
	EmbedModel string
	// Learning shows extraction up to Examples past revisions of the scope as worked
	// examples (learning.DefaultExamples when Examples is 0).
	Learning bool
	Examples int
	// Workers is how many extractions (and scopes consolidated) run at once.
	Workers int
	// MaxCandidates is K of extraction (extract.DefaultMaxCandidates when 0).
	MaxCandidates int
	// ConfidenceFloor as in memory.Config.
	ConfidenceFloor float64
	// Containment configures the engine's guards on a model's destructive directives,
	// as in memory.Config (eval --inject runs with them on and off).
	Containment memory.Containment
	// MaxAttempts of an extraction job; retries wait seconds, not River's hours.
	MaxAttempts int
	JobTimeout  time.Duration
	// Consolidation settings (the consolidate package's defaults when 0).
	ConsolidateThreshold  float64
	ConsolidateMaxCluster int
	// K is how many beliefs recall ranks per question.
	K int
	// Keep leaves the schema in the database instead of dropping it.
	Keep bool
	// RunID, for the benchmark runners, goes on with the schema an earlier run kept
	// (SchemaPrefix + RunID) instead of creating one: what it extracted is not extracted
	// again. The schema is kept again at the end.
	RunID  string
	Logger *slog.Logger
	// Progress, when set, is told what the run is doing, a line at a time.
	Progress io.Writer
	// Bar, when set (a terminal), shows the benchmark runners' progress as bars that
	// redraw themselves, instead of a line every few seconds.
	Bar io.Writer
}

// validate says what c lacks.
func (c Config) validate() error {
	if c.Chat == nil || c.Embed == nil || c.EmbedModel == "" {
		return errors.New("eval: Chat, Embed and EmbedModel are required")
	}
	return nil
}

// withDefaults is c with the defaults of what it leaves zero, k of K.
func (c Config) withDefaults(k int) Config {
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	c.JobTimeout = cmp.Or(c.JobTimeout, DefaultJobTimeout)
	c.K = cmp.Or(c.K, k)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.RunID != "" {
		c.Keep = true
	}
	return c
}

// RunResult is the outcome of one run over a scenario set.
type RunResult struct {
	Learning bool `json:"learning"`
	// Schema is the throwaway schema; it is gone after the run unless SchemaKept.
	Schema     string            `json:"schema"`
	SchemaKept bool              `json:"schema_kept"`
	Seconds    float64           `json:"seconds"`
	Categories []CategoryMetrics `json:"categories"`
	Total      Metrics           `json:"total"`
	Scenarios  []ScenarioResult  `json:"scenarios"`
}

// Run sends scenarios through the real pipeline in a new schema of cfg.DatabaseURL and
// scores what memory holds afterwards. Transcripts are enqueued in rounds: the first
// transcript of every scenario, then, once every job is done, the second, and so on,
// so each scope sees its conversations in order (and, with learning, its earlier
// revisions as examples) while scopes are extracted in parallel. Then each scope's
// beliefs are embedded, consolidated and asked the scenario's questions. The schema is
// dropped at the end unless cfg.Keep.
func Run(ctx context.Context, scenarios []Scenario, cfg Config) (res *RunResult, err error) {
	return run(ctx, scenarios, cfg, nil)
}

// inspector reads what a scenario's scope holds beyond what Score looks at, before the
// schema is dropped: i is the scenario's index, episodes its transcripts' episode ids.
type inspector func(ctx context.Context, store *memory.Store, i int, episodes []int64) error

// run is Run, with inspect called for every scenario once it is scored.
func run(ctx context.Context, scenarios []Scenario, cfg Config, inspect inspector) (res *RunResult, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if len(scenarios) == 0 {
		return nil, errors.New("eval: no scenarios")
	}
	cfg = cfg.withDefaults(DefaultK)
	start := time.Now()

	maxConns := int32(min(cfg.Workers+8, 64)) //nolint:gosec // G115: at most 64
	pool, schema, drop, err := createSchema(ctx, cfg.DatabaseURL, maxConns)
	if err != nil {
		return nil, err
	}
	res = &RunResult{Learning: cfg.Learning, Schema: schema, SchemaKept: cfg.Keep}
	defer func() {
		if cfg.Keep {
			pool.Close()
			return
		}
		if derr := drop(); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	r := &runner{cfg: cfg, pool: pool, schema: schema, scenarios: scenarios, obs: &collector{eps: map[int64]*Episode{}}, inspect: inspect}
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	if err := r.extract(ctx); err != nil {
		return nil, err
	}
	if res.Scenarios, err = r.finish(ctx); err != nil {
		return nil, err
	}
	res.Categories, res.Total = Aggregate(res.Scenarios)
	res.Seconds = round(time.Since(start).Seconds(), 1)
	return res, nil
}

type runner struct {
	cfg          Config
	pool         *pgxpool.Pool
	schema       string
	scenarios    []Scenario
	store        *memory.Store
	client       *river.Client[pgx.Tx]
	consolidator *consolidate.Worker
	obs          *collector
	// episodes maps each scenario's transcripts to their episode ids.
	episodes [][]int64
	inspect  inspector
	mu       sync.Mutex // progress
}

// progress tells cfg.Progress one line, in one write: scopes finish concurrently.
func (r *runner) progressf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.cfg.Progress, format+"\n", args...)
}

func (r *runner) prepare(ctx context.Context) error {
	if err := migrate(ctx, r.pool, r.schema, r.cfg.Logger); err != nil {
		return err
	}
	r.store = memory.NewStore(r.pool, &memory.Config{ConfidenceFloor: r.cfg.ConfidenceFloor, Containment: r.cfg.Containment})
	var examples *learning.Retriever
	if r.cfg.Learning {
		examples = learning.NewRetriever(r.store, r.cfg.Examples, "")
	}
	extractor, err := extract.NewWorker(extract.Config{
		Store: r.store, Chat: r.cfg.Chat, Embed: r.cfg.Embed, EmbedModel: r.cfg.EmbedModel,
		MaxCandidates: r.cfg.MaxCandidates, Examples: examples, Logger: r.cfg.Logger, Observer: r.obs,
		EpisodeTimeout: r.cfg.JobTimeout, MaxAttempts: r.cfg.MaxAttempts, RetryPolicy: quickRetry{},
	})
	if err != nil {
		return err
	}
	r.consolidator, err = consolidate.NewWorker(consolidate.Config{
		Store: r.store, Chat: r.cfg.Chat, Embed: r.cfg.Embed, EmbedModel: r.cfg.EmbedModel,
		Threshold: r.cfg.ConsolidateThreshold, MaxCluster: r.cfg.ConsolidateMaxCluster, Logger: r.cfg.Logger,
	})
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, extractor); err != nil {
		return err
	}
	r.client, err = river.NewClient(riverpgxv5.New(r.pool), &river.Config{
		Queues:               map[string]river.QueueConfig{extract.Queue: {MaxWorkers: r.cfg.Workers}},
		Workers:              workers,
		JobTimeout:           r.cfg.JobTimeout,
		RescueStuckJobsAfter: r.cfg.JobTimeout + time.Minute,
		MaxAttempts:          r.cfg.MaxAttempts,
		RetryPolicy:          quickRetry{},
		Schema:               r.schema,
		FetchPollInterval:    50 * time.Millisecond,
		FetchCooldown:        10 * time.Millisecond,
		Logger:               r.cfg.Logger.With("component", "river"),
	})
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	return nil
}

// quickRetry retries a failed extraction within seconds: an evaluation waits for
// every job, and River's default backoff would make it wait hours.
type quickRetry struct{}

func (quickRetry) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(min(time.Duration(job.Attempt*job.Attempt)*time.Second, 30*time.Second))
}

// start starts River's client; stop stops it, cancelling the jobs still running.
func (r *runner) start(ctx context.Context) (stop func(), err error) {
	if err := r.client.Start(ctx); err != nil {
		return nil, fmt.Errorf("start river: %w", err)
	}
	return func() {
		stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := r.client.StopAndCancel(stop); err != nil {
			r.cfg.Logger.Warn("stop river", "error", err)
		}
	}, nil
}

// extract enqueues the transcripts round by round and works every job.
func (r *runner) extract(ctx context.Context) error {
	stop, err := r.start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	rounds := 0
	r.episodes = make([][]int64, len(r.scenarios))
	for _, s := range r.scenarios {
		rounds = max(rounds, len(s.Transcripts))
	}
	for round := range rounds {
		var (
			ts   []transcript.Transcript
			from []int
		)
		for i, s := range r.scenarios {
			if round < len(s.Transcripts) {
				ts = append(ts, s.Transcripts[round].Transcript(s.Scope))
				from = append(from, i)
			}
		}
		started := time.Now()
		err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
			res, err := extract.Enqueue(ctx, tx, r.client, ts, started, nil)
			if err != nil {
				return err
			}
			for j, id := range res.EpisodeIDs {
				r.episodes[from[j]] = append(r.episodes[from[j]], id)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("enqueue round %d: %w", round+1, err)
		}
		if err := r.drain(ctx, fmt.Sprintf("round %d/%d", round+1, rounds), len(ts)); err != nil {
			return err
		}
		r.progressf("round %d/%d: %d episodes extracted in %s", round+1, rounds, len(ts), time.Since(started).Round(100*time.Millisecond))
	}
	return nil
}

// jobsLeft counts the run's River jobs still waiting, running or due for a retry.
func (r *runner) jobsLeft(ctx context.Context) (int, error) {
	return riverjobs.Unfinished(ctx, r.client)
}

// drain waits until no job is waiting, running or due for a retry, telling progress
// now and then.
func (r *runner) drain(ctx context.Context, what string, n int) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	for {
		left, err := r.jobsLeft(ctx)
		if err != nil {
			return err
		}
		if left == 0 {
			return nil
		}
		if time.Since(last) > 15*time.Second {
			r.progressf("%s: %d of %d episodes extracted", what, n-left, n)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// finish embeds, consolidates, questions and scores each scenario's scope, as many at
// once as there are workers.
func (r *runner) finish(ctx context.Context) ([]ScenarioResult, error) {
	states, err := r.episodeStates(ctx)
	if err != nil {
		return nil, err
	}
	r.progressf("consolidating and questioning %d scopes", len(r.scenarios))
	results := make([]ScenarioResult, len(r.scenarios))
	errs := make([]error, len(r.scenarios))
	parallel(len(r.scenarios), r.cfg.Workers, func(i int) {
		results[i], errs[i] = r.scenario(ctx, i, states)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return results, nil
}

func (r *runner) scenario(ctx context.Context, i int, states map[int64]Episode) (ScenarioResult, error) {
	s := r.scenarios[i]
	var (
		obs  Observation
		errs []string
	)
	for j, id := range r.episodes[i] {
		e := r.obs.episode(id)
		st := states[id]
		e.Transcript, e.EpisodeID, e.State, e.Attempts = s.Transcripts[j].ID, id, st.State, max(e.Attempts, st.Attempts)
		if st.State == memory.EpisodeApplied {
			e.Error = ""
		} else if st.Error != "" {
			e.Error = st.Error
		}
		e.DurationMs = round(float64(e.Duration)/float64(time.Millisecond), 1)
		obs.Episodes = append(obs.Episodes, e)
	}
	// What the last jobs stored waits for the next job's embedding call; consolidation
	// and ranked recall only see embedded beliefs.
	if err := r.embedPending(ctx, s.Scope); err != nil {
		if ctx.Err() != nil {
			return ScenarioResult{}, ctx.Err()
		}
		errs = append(errs, "embed: "+err.Error())
	}
	rep, err := r.consolidator.RunScope(ctx, s.Scope)
	obs.Consolidation = Consolidation{ChatCalls: rep.ChatCalls, PromptTokens: rep.PromptTokens,
		CompletionTokens: rep.CompletionTokens, Applied: rep.Applied}
	if err != nil {
		if ctx.Err() != nil {
			return ScenarioResult{}, ctx.Err()
		}
		errs = append(errs, "consolidate: "+err.Error())
		r.progressf("%s: consolidation failed: %v", s.Name, err)
	}
	if obs.Answers, err = r.ask(ctx, s); err != nil {
		if ctx.Err() != nil {
			return ScenarioResult{}, ctx.Err()
		}
		errs = append(errs, "recall: "+err.Error())
		r.progressf("%s: questions failed: %v", s.Name, err)
	}
	if obs.Beliefs, err = r.store.All(ctx, s.Scope); err != nil {
		return ScenarioResult{}, err
	}
	if obs.Events, err = r.store.Events(ctx, s.Scope, 0); err != nil {
		return ScenarioResult{}, err
	}
	res := Score(s, obs)
	res.Errors = errs
	if r.inspect != nil {
		if err := r.inspect(ctx, r.store, i, r.episodes[i]); err != nil {
			return ScenarioResult{}, err
		}
	}
	return res, nil
}

// episodeStates reads how each episode ended.
func (r *runner) episodeStates(ctx context.Context) (map[int64]Episode, error) {
	eps, err := r.store.EpisodeStates(ctx)
	if err != nil {
		return nil, err
	}
	states := make(map[int64]Episode, len(eps))
	for _, e := range eps {
		ep := Episode{EpisodeID: e.ID, State: e.State, Attempts: e.Attempts}
		if e.LastError != nil {
			ep.Error = *e.LastError
		}
		states[e.ID] = ep
	}
	return states, nil
}

// embedPending embeds the beliefs and revision events of scope stored without a vector.
func (r *runner) embedPending(ctx context.Context, scope string) error {
	for range 100 {
		pending, err := r.store.Unembedded(ctx, scope, r.cfg.EmbedModel, 64)
		if err != nil || len(pending) == 0 {
			return err
		}
		texts := make([]string, len(pending))
		for i, p := range pending {
			texts[i] = p.Text
		}
		vecs, err := r.embed(ctx, texts)
		if err != nil {
			return err
		}
		if _, err := r.store.SetEmbeddings(ctx, r.cfg.EmbedModel, pending, vecs); err != nil {
			return err
		}
	}
	return nil
}

// embed embeds texts in one call and registers the model's dimension.
func (r *runner) embed(ctx context.Context, texts []string) ([][]float32, error) {
	res, err := r.cfg.Embed.Embed(ctx, texts)
	if err == nil && len(res.Vectors) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(res.Vectors), len(texts))
	}
	if err != nil {
		return nil, err
	}
	if err := r.store.EnsureEmbeddingModel(ctx, r.cfg.EmbedModel, len(res.Vectors[0])); err != nil {
		return nil, err
	}
	return res.Vectors, nil
}

// ask answers each question of s with memory.Recall, as an agent would: the question
// embedded, the K nearest beliefs, history mode when the question reads as historical.
func (r *runner) ask(ctx context.Context, s Scenario) ([][]string, error) {
	qs := s.Expect.Questions
	if len(qs) == 0 {
		return nil, nil
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Q
	}
	vecs, err := r.embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	answers := make([][]string, len(qs))
	for i, q := range qs {
		rec, err := r.store.Recall(ctx, memory.RecallQuery{Scope: s.Scope, Text: q.Q, Vector: vecs[i], EmbedModel: r.cfg.EmbedModel, K: r.cfg.K})
		if err != nil {
			return answers, err
		}
		answers[i] = []string{}
		for _, b := range rec.Beliefs {
			answers[i] = append(answers[i], b.Statement)
		}
	}
	return answers, nil
}

// collector gathers extraction reports by episode.
type collector struct {
	mu  sync.Mutex
	eps map[int64]*Episode
}

func (c *collector) Extracted(rep extract.Report) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.eps[rep.EpisodeID]
	if e == nil {
		e = &Episode{EpisodeID: rep.EpisodeID}
		c.eps[rep.EpisodeID] = e
	}
	e.Attempts++
	e.ChatCalls += rep.ChatCalls
	e.PromptTokens += rep.Usage.PromptTokens
	e.CompletionTokens += rep.Usage.CompletionTokens
	e.Examples = rep.Examples
	e.Duration += rep.Duration
	e.Error = ""
	if rep.Err != nil {
		e.Error = rep.Err.Error()
	}
}

func (c *collector) episode(id int64) Episode {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.eps[id]; e != nil {
		return *e
	}
	return Episode{EpisodeID: id}
}

// createSchema creates a schema named SchemaPrefix plus random hex in the database at
// url and returns a pool whose search_path holds that schema and the one of the vector
// extension, nothing else: the database may be the one credo runs in, and its tables
// must never be found in place of the eval's own. drop closes the pool and drops the
// schema.
func createSchema(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, string, func() error, error) {
	return openSchema(ctx, url, maxConns, "")
}

// RunIDError says a run id names no kept schema, or is not a run id at all.
type RunIDError struct {
	RunID   string
	Problem string
}

func (e *RunIDError) Error() string { return fmt.Sprintf("run %q: %s", e.RunID, e.Problem) }

// runIDPattern is what a run id looks like: the 12 hex digits after SchemaPrefix.
var runIDPattern = regexp.MustCompile(`^[0-9a-f]{12}$`)

// RunID is the run id of a throwaway schema: what --run takes to go on with it.
func RunID(schema string) string { return strings.TrimPrefix(schema, SchemaPrefix) }

// openSchema is createSchema, or with runID the schema SchemaPrefix+runID kept by an
// earlier run, which must exist: a run that goes on where another stopped.
func openSchema(ctx context.Context, url string, maxConns int32, runID string) (*pgxpool.Pool, string, func() error, error) {
	if runID != "" && !runIDPattern.MatchString(runID) {
		return nil, "", nil, &RunIDError{RunID: runID, Problem: "not a run id: 12 hex digits, as printed by a run kept with --keep"}
	}
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, "", nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	admin, err := pgx.ConnectConfig(ctx, pc.ConnConfig.Copy())
	if err != nil {
		return nil, "", nil, fmt.Errorf("connect to database: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	// The extension is created where the worker's migration would create it, never in
	// the throwaway schema, whose drop would take it (and every vector column) along.
	if _, err := admin.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
		return nil, "", nil, fmt.Errorf("the pgvector extension is needed: %w", err)
	}
	var ext string
	err = admin.QueryRow(ctx, "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'vector'").Scan(&ext)
	if err != nil {
		return nil, "", nil, fmt.Errorf("find the pgvector extension: %w", err)
	}
	if runID == "" {
		b := make([]byte, 6)
		if _, err := rand.Read(b); err != nil {
			return nil, "", nil, err
		}
		runID = hex.EncodeToString(b)
		if _, err := admin.Exec(ctx, "CREATE SCHEMA "+SchemaPrefix+runID); err != nil {
			return nil, "", nil, fmt.Errorf("create schema %s: %w", SchemaPrefix+runID, err)
		}
	} else {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", SchemaPrefix+runID).Scan(&n); err != nil {
			return nil, "", nil, fmt.Errorf("find schema %s: %w", SchemaPrefix+runID, err)
		}
		if n == 0 {
			return nil, "", nil, &RunIDError{RunID: runID, Problem: "no schema " + SchemaPrefix + runID + " in this database: was the run kept?"}
		}
	}
	name := SchemaPrefix + runID
	connCfg := pc.ConnConfig.Copy()
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		conn, err := pgx.ConnectConfig(ctx, connCfg)
		if err != nil {
			return fmt.Errorf("drop schema %s: %w", name, err)
		}
		defer conn.Close(ctx)
		unlock, err := migrations.LockSchemaDDL(ctx, conn)
		if err != nil {
			return fmt.Errorf("drop schema %s: %w", name, err)
		}
		defer unlock()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			return fmt.Errorf("drop schema %s: %w", name, err)
		}
		return nil
	}
	// ext is regnamespace output: already quoted where it needs to be.
	pc.ConnConfig.RuntimeParams["search_path"] = name + ", " + ext
	pc.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, "", nil, errors.Join(fmt.Errorf("connect to database: %w", err), drop())
	}
	return pool, name, func() error {
		pool.Close()
		return drop()
	}, nil
}

// migrate applies River's and credo's migrations to the schema. The extension's schema
// may hold a deployment of credo (public, typically), whose river_migration an
// unqualified look-up would find first while the schema has none: River's own line is
// applied to the schema by name, and only then, with every look-up finding the
// schema's tables, credo's migrations.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, logger *slog.Logger) error {
	// On Citus, away from other schemas' creation and drop (migrations.SchemaLockKey).
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	unlock, err := migrations.LockSchemaDDL(ctx, conn)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer unlock()
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema, Logger: quiet(logger)})
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	var where string
	if err := pool.QueryRow(ctx, "SELECT to_regclass('river_migration')::text").Scan(&where); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if where != "river_migration" && where != schema+".river_migration" {
		return fmt.Errorf("migrate: river_migration resolves to %s, not to schema %s", where, schema)
	}
	return migrations.Migrate(ctx, pool, logger)
}

// quiet drops River's info logs: it logs every migration step.
func quiet(logger *slog.Logger) *slog.Logger {
	return slog.New(levelHandler{logger.Handler(), slog.LevelWarn})
}

type levelHandler struct {
	slog.Handler
	min slog.Level
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
