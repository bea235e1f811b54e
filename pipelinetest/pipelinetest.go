// Package pipelinetest runs the real pipeline for tests (beside cmd: like it, it composes
// the stages, and no package below them imports it): a per-test schema, the
// memory store, a wire-level fake LLM with a real provider client, and a started River
// client working extraction jobs.
package pipelinetest

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/consolidate"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transcript"
)

// Options adjusts a Pipeline.
type Options struct {
	// Provider is llm.ProviderOpenAI (default) or llm.ProviderOllama.
	Provider string
	// MaxAttempts of an episode, and of a job (default 3).
	MaxAttempts int
	// Workers is the extraction concurrency (default 4).
	Workers int
	// Server options of the fake LLM.
	LLMOptions []llmtest.Option
	// LLMConfig adjusts the provider's configuration (MODEL_CONTEXT, EMBED_CONTEXT).
	LLMConfig func(*llm.Config)
	// MaxConns, when set, gives each River client a pool of its own of this size
	// (default: the test schema's pool of 10 for the first client).
	MaxConns int32
	// Extract adjusts the worker's configuration.
	Extract func(*extract.Config)
	// Consolidate, when set, also works consolidation jobs, as the worker process does.
	Consolidate bool
	// ExactSearchLimit is the stores' memory.Config.ExactSearchLimit (0: the default).
	ExactSearchLimit int
	// Containment is the stores' memory.Config.Containment (zero: the defaults).
	Containment memory.Containment
	// Middleware is installed in every River client, to observe the jobs it works
	// (benchmarks time them).
	Middleware []rivertype.Middleware
	// Router runs the store, the workers and Enqueue on dbtest's RouterPool: on Citus any
	// multi-shard query of theirs fails (River's own tables are local and unaffected).
	// On Citus the workers and Enqueue always do (make test-citus runs every test
	// there): extraction and consolidation of a scope are router work. Router also puts
	// Store there, whose reads by id (memory.Store.ScopeOf) span shards by design.
	Router bool
	// Redact is the deployment's redactor of Enqueue and the workers (nil:
	// redact.Default, as REDACT's default).
	Redact *redact.Redactor
	// Announcer is the stores' memory.Config.Announcer (nil: a change log without
	// followers, as the commands write it).
	Announcer memory.Announcer
	// AddWorkers, when set, registers more workers in every River client, with the
	// queues they need.
	AddWorkers func(workers *river.Workers, pool *pgxpool.Pool, store *memory.Store) map[string]river.QueueConfig
}

func (o *Options) memory() *memory.Config {
	if o.Announcer == nil {
		o.Announcer = changes.NewLog(changes.Config{})
	}
	return &memory.Config{ExactSearchLimit: o.ExactSearchLimit, Containment: o.Containment, Announcer: o.Announcer}
}

// Pipeline is a running pipeline.
type Pipeline struct {
	Schema   *dbtest.Schema
	Store    *memory.Store
	LLM      *llmtest.Server
	Provider llm.Provider
	Client   *river.Client[pgx.Tx]
	opts     *Options
	// pool is the pool Store is on: the schema's, or its router's.
	pool *pgxpool.Pool
	// work is the pool of the workers and Enqueue: the router's on Citus, else pool.
	work *pgxpool.Pool
	// inspect is a store on the schema's own pool, for a test's reads that the router
	// pool would refuse (an episode by id asks every shard).
	inspect *memory.Store
}

// New starts a pipeline that stops when the test ends.
func New(tb testing.TB, opts *Options) *Pipeline {
	tb.Helper()
	if opts == nil {
		opts = &Options{}
	}
	schema := dbtest.New(tb)
	srv := llmtest.NewServer(tb, opts.LLMOptions...)
	var (
		provider llm.Provider
		err      error
	)
	cfg := srv.OpenAIConfig()
	if opts.Provider == llm.ProviderOllama {
		cfg = srv.OllamaConfig()
	}
	if opts.LLMConfig != nil {
		opts.LLMConfig(&cfg)
	}
	if opts.Provider == llm.ProviderOllama {
		provider, err = llm.NewOllama(cfg)
	} else {
		provider, err = llm.NewOpenAI(cfg)
	}
	require.NoError(tb, err)

	pool, work := schema.Pool, schema.Pool
	if opts.Router || schema.Citus {
		work = schema.RouterPool(tb)
	}
	if opts.Router {
		pool = work
	}
	p := &Pipeline{Schema: schema, Store: memory.NewStore(pool, opts.memory()), LLM: srv, Provider: provider, opts: opts,
		pool: pool, work: work, inspect: memory.NewStore(schema.Pool, opts.memory())}
	p.Client = p.AddClient(tb)
	return p
}

// Pool is the pool Store is on, for what a test builds beside it (an API's keys, an
// enqueue's transaction).
func (p *Pipeline) Pool() *pgxpool.Pool { return p.pool }

// AddClient starts one more River client working extraction jobs on the pipeline's
// database, as another worker process would, with its own connection pool; it stops
// when the test ends.
func (p *Pipeline) AddClient(tb testing.TB) *river.Client[pgx.Tx] {
	tb.Helper()
	ctx := context.Background()
	pool := p.work
	store := p.Store
	if p.work != p.pool {
		store = memory.NewStore(p.work, p.opts.memory())
	}
	opts := p.opts
	if p.Client != nil || opts.MaxConns > 0 {
		pc, err := pgxpool.ParseConfig(p.Schema.URL)
		require.NoError(tb, err)
		if p.work != p.Schema.Pool {
			// The router's setting, as on the first client's pool.
			pc.ConnConfig.RuntimeParams["citus.multi_task_query_log_level"] = "error"
		}
		pc.MaxConns = cmp.Or(opts.MaxConns, 10)
		pool, err = pgxpool.NewWithConfig(ctx, pc)
		require.NoError(tb, err)
		tb.Cleanup(pool.Close)
		store = memory.NewStore(pool, opts.memory())
	}
	cfg := extract.Config{Store: store, Chat: p.Provider, Embed: p.Provider, EmbedModel: p.Provider.EmbedModel(),
		MaxAttempts: cmp.Or(opts.MaxAttempts, 3), RetryPolicy: quickRetry{}, Redact: opts.Redact}
	if opts.Extract != nil {
		opts.Extract(&cfg)
	}
	worker, err := extract.NewWorker(cfg)
	require.NoError(tb, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, worker)
	// The reconcile, the sweep and the jobs of earlier versions (which name an episode
	// by id alone) span scopes by design (docs/operations.md, "Beyond one database"): on
	// the schema's own pool.
	river.AddWorker(workers, extract.NewEpisodeWorker(p.Schema.Pool))
	river.AddWorker(workers, extract.NewReconcileWorker(p.Schema.Pool, nil))
	queues := map[string]river.QueueConfig{extract.Queue: {MaxWorkers: cmp.Or(opts.Workers, 4)}}
	if opts.Consolidate {
		cw, err := consolidate.NewWorker(consolidate.Config{Store: store, Chat: p.Provider, Embed: p.Provider,
			EmbedModel: p.Provider.EmbedModel()})
		require.NoError(tb, err)
		river.AddWorker(workers, cw)
		river.AddWorker(workers, consolidate.NewSweepWorker(p.Schema.Pool, nil))
		river.AddWorker(workers, consolidate.NewIndexWorker(store, p.Provider.EmbedModel(), nil))
		river.AddWorker(workers, consolidate.NewDropIndexesWorker(store, nil))
		queues[consolidate.Queue] = river.QueueConfig{MaxWorkers: 1}
	}
	if opts.AddWorkers != nil {
		maps.Copy(queues, opts.AddWorkers(workers, pool, store))
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:            queues,
		Workers:           workers,
		MaxAttempts:       cmp.Or(opts.MaxAttempts, 3),
		RetryPolicy:       quickRetry{},
		FetchPollInterval: 20 * time.Millisecond,
		FetchCooldown:     5 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
		Middleware:        opts.Middleware,
	})
	require.NoError(tb, err)
	require.NoError(tb, client.Start(ctx))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	return client
}

// quickRetry retries at once: River makes a job due within its scheduler interval
// available immediately.
type quickRetry struct{}

func (quickRetry) NextRetry(*rivertype.JobRow) time.Time {
	return time.Now().Add(10 * time.Millisecond)
}

// Enqueue stores transcripts and inserts their jobs, as cmd/enqueue does.
func (p *Pipeline) Enqueue(tb testing.TB, ts ...transcript.Transcript) *extract.EnqueueResult {
	tb.Helper()
	ctx := context.Background()
	var res *extract.EnqueueResult
	err := pgx.BeginFunc(ctx, p.work, func(tx pgx.Tx) error {
		var err error
		res, err = extract.Enqueue(ctx, tx, p.Client, ts, time.Now(), p.opts.Redact)
		return err
	})
	require.NoError(tb, err)
	return res
}

// Consolidate enqueues consolidation passes of scopes, as the periodic sweep does.
func (p *Pipeline) Consolidate(tb testing.TB, scopes ...string) {
	tb.Helper()
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, p.Schema.Pool, func(tx pgx.Tx) error {
		_, err := consolidate.Enqueue(ctx, tx, p.Client, scopes...)
		return err
	})
	require.NoError(tb, err)
}

// Drain waits until no job is waiting, running or due for a retry.
func (p *Pipeline) Drain(tb testing.TB) {
	tb.Helper()
	require.Eventually(tb, func() bool {
		left, err := riverjobs.AnyUnfinished(context.Background(), p.Client)
		return err == nil && !left
	}, 60*time.Second, 20*time.Millisecond)
}

// Episode is the processing state of one episode.
type Episode struct {
	// State is a memory.EpisodeState, as a string for tests to compare with literals.
	State     string
	Attempts  int
	LastError *string
}

// Episode reads the state of episode id.
func (p *Pipeline) Episode(tb testing.TB, id int64) Episode {
	tb.Helper()
	ep, err := p.inspect.Episode(context.Background(), id)
	require.NoError(tb, err)
	return Episode{State: string(ep.State), Attempts: ep.Attempts, LastError: ep.LastError}
}

// T is a transcript in which the user says each line and the assistant answers "Noted.".
func T(scope, id, occurredAt string, userSays ...string) transcript.Transcript {
	at, err := time.Parse(time.RFC3339, occurredAt)
	if err != nil {
		panic(err)
	}
	tr := transcript.Transcript{Scope: scope, ID: id, OccurredAt: &at}
	for _, s := range userSays {
		tr.Messages = append(tr.Messages,
			transcript.Message{Role: transcript.RoleUser, Content: s},
			transcript.Message{Role: transcript.RoleAssistant, Content: "Noted."})
	}
	return tr
}

// Fact is one fact of a scripted extraction answer.
type Fact struct {
	Statement string
	// Subject is "user" unless set; SubjectAliases and SubjectKind are sent when set.
	Subject        string
	SubjectAliases []string
	SubjectKind    string
	Attribute      string
	ValidFrom      string
	Origin         string
	Confidence     float64
	Kind           string
	Quote          string // default: the statement
	Resolves       *Resolves
	DependsOn      []int
}

// Resolves is a fact's directive.
type Resolves struct {
	Index  int
	Action string
	Reason string
}

// Answer is an extraction answer holding facts.
func Answer(facts ...Fact) string {
	out := []map[string]any{}
	for _, f := range facts {
		m := map[string]any{
			"statement": f.Statement, "subject": or(f.Subject, "user"), "attribute": or(f.Attribute, "other"), "kind": or(f.Kind, "attribute"),
			"valid_from": nil, "confidence": 0.9, "origin": or(f.Origin, "user_stated"), "quote": or(f.Quote, f.Statement), "resolves": nil,
		}
		if f.ValidFrom != "" {
			m["valid_from"] = f.ValidFrom
		}
		if f.Confidence != 0 {
			m["confidence"] = f.Confidence
		}
		if f.DependsOn != nil {
			m["depends_on"] = f.DependsOn
		}
		if f.SubjectAliases != nil {
			m["subject_aliases"] = f.SubjectAliases
		}
		if f.SubjectKind != "" {
			m["subject_kind"] = f.SubjectKind
		}
		if r := f.Resolves; r != nil {
			m["resolves"] = map[string]any{"session_index": r.Index, "action": r.Action, "reason": r.Reason}
		}
		out = append(out, m)
	}
	b, err := json.Marshal(map[string]any{"reasoning": "scripted", "facts": out})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
