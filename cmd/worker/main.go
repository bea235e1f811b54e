// Command worker runs credo's River workers: it applies pending migrations, then
// processes extraction jobs until SIGINT or SIGTERM, or with --drain until no job is
// left to run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/cmd/internal/metrics"
	"github.com/credohq/credo/consolidate"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/inspector"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/learning"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/migrations"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/reembed"
	"github.com/credohq/credo/retention"
	"github.com/credohq/credo/webhook"
)

func main() {
	// The worker watches its signals itself, not through app.Main's context: it says
	// which one came, a second one stops at once, and a drain it stopped with work left
	// exits ExitInterrupted.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	err := runSignaled(context.Background(), signals, os.Args[1:], os.Getenv, os.Stderr, nil)
	os.Exit(config.ExitCode("worker", err, os.Stderr))
}

const groups = config.GroupDB | config.GroupLLM | config.GroupWorker | config.GroupConsolidate | config.GroupRetention | config.GroupWebhooks

// run is the whole command; ready, when set, receives the HTTP address once serving.
// It returns when ctx is canceled (after a graceful stop) or, with --drain, when no job
// is left.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready func(addr string)) error {
	return runSignaled(ctx, nil, args, getenv, stderr, ready)
}

// runSignaled is run stopped by signals too: the first stops it as ctx's end does, the
// second at once (see watchSignals).
func runSignaled(ctx context.Context, signals <-chan os.Signal, args []string, getenv func(string) string, stderr io.Writer,
	ready func(addr string)) (err error) {
	cfg, mode, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	drain := mode.drain
	logger := app.Logger(cfg, stderr)
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	now, done := make(chan struct{}), make(chan struct{})
	defer close(done)
	if signals != nil {
		go watchSignals(signals, logger, stop, now, done)
	}
	// A stopped drain run says whether work is left, whatever step the stop cut short:
	// judged before the pool closes, or, stopped before it opened, here.
	var (
		store  *memory.Store
		client *river.Client[pgx.Tx]
		judged bool
	)
	defer func() {
		if drain && ctx.Err() != nil && !judged {
			err = drainOutcome(context.Cause(ctx), err, nil, nil) //nolint:contextcheck // ctx is done: the look has its own
		}
	}()
	// Stopped last, after River and the HTTP server: the spans of the jobs and requests
	// that ended during the stop are exported too.
	tr, err := app.StartTracing(ctx, getenv)
	if err != nil {
		return err
	}
	defer app.StopTracing(ctx, tr, logger)

	// Connections are taken per query and never held across an LLM call, so a pool a
	// little larger than the worker count suffices.
	// A webhook delivery holds its connection while it sends.
	maxConns := int32(min(cfg.Workers+cfg.WebhookWorkers+4, 96)) //nolint:gosec // G115: at most 96
	pool, err := app.OpenDB(ctx, cfg, maxConns, logger, tr.ConfigurePool)
	if err != nil {
		return err
	}
	defer pool.Close()
	defer func() {
		if drain && ctx.Err() != nil {
			judged = true
			err = drainOutcome(context.Cause(ctx), err, client, store) //nolint:contextcheck // ctx is done: the look has its own
		}
	}()

	chat, embed, err := app.Providers(cfg)
	if err != nil {
		return err
	}
	if err := checkModels(ctx, cfg, logger, drain); err != nil {
		return err
	}
	m := metrics.New()
	chat, embed = tr.WrapProvider(m.WrapProvider(chat)), tr.WrapProvider(m.WrapProvider(embed))
	store = memory.NewStore(pool, app.MemoryConfig(cfg, floor(cfg.ConfidenceFloor)))
	m.WatchBacklog(store)
	m.WatchReembed(store, cfg.EmbedModel)
	m.WatchReverts(store)
	red, err := app.Redactor(cfg)
	if err != nil {
		return err
	}
	client, err = newClient(cfg, pool, store, chat, embed, red, m, tr, logger, drain)
	if err != nil {
		return err
	}

	// A drain run serves no HTTP unless asked: it runs beside the service it drains for,
	// which holds HTTP_ADDR.
	if cfg.HTTPAddr != "" && (!drain || mode.http) {
		srv, err := startHTTP(ctx, cfg, pool, store, client, chat, embed, red, m, tr, logger)
		if err != nil {
			return err
		}
		defer srv.Close()
		if ready != nil {
			ready(srv.Addr)
		}
	}

	// River stops on its own context's end with no grace; it gets one of its own so that
	// a signal leads to the soft stop below. The watcher ends when the client stops, so
	// jobs finishing during shutdown are counted.
	m.WatchRiver(context.WithoutCancel(ctx), client)
	var progress *drainProgress
	if drain {
		// The backlog is read before any job runs, so the progress counts all of it.
		if progress, err = newDrainProgress(ctx, store, stderr, logger); err != nil {
			return err
		}
		defer progress.close()
	}
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start river: %w", err)
	}
	logger.InfoContext(ctx, "worker started", "provider", chat.Name(), "chat_model", chat.ChatModel(),
		"embed_model", embed.EmbedModel(), "workers", cfg.Workers, "drain", drain, "retain_history", cfg.RetainHistory)

	var runErr error
	if drain {
		// A drain run schedules no periodic job, so it gives jobless pending episodes
		// (from an upgrade, or a crash) their scope's job itself.
		if runErr = reconcile(ctx, pool, client, logger); runErr == nil {
			runErr = waitDrained(ctx, client, progress)
		}
	} else {
		<-ctx.Done()
	}
	return errors.Join(runErr, shutdown(client, cfg.ShutdownTimeout, now, logger)) //nolint:contextcheck // ctx is done: the stop has its own
}

// runMode is how the worker runs, from its flags.
type runMode struct {
	// drain: exit once no job is left to run.
	drain bool
	// http: serve HTTP_ADDR in a drain run too.
	http bool
}

// parseFlags reads the worker's settings from the environment and its flags: how to
// run, and the rest of the configuration, checked.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (cfg *config.Config, mode runMode, err error) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&mode.drain, "drain", false, "exit once no job is left to run, retries included; serves no HTTP unless --http. "+
		"SIGINT or SIGTERM stops it once running jobs finish, a second one at once; it then exits "+
		strconv.Itoa(config.ExitInterrupted)+" when work is left")
	fs.BoolVar(&mode.http, "http", false, "with --drain, serve the API, MCP, inspector, /healthz and /metrics at HTTP_ADDR too")
	if cfg, err = config.Load(fs, groups, getenv); err != nil {
		return nil, runMode{}, config.Usage(err)
	}
	if err := config.ParseFlags(fs, args); err != nil {
		return nil, runMode{}, err
	}
	if fs.NArg() > 0 {
		return nil, runMode{}, config.Usagef("unexpected arguments: %v", fs.Args())
	}
	if mode.http && !mode.drain {
		return nil, runMode{}, config.Usagef("--http goes with --drain: a worker without it always serves HTTP_ADDR")
	}
	if err := cfg.Checked(groups); err != nil {
		return nil, runMode{}, err
	}
	return cfg, mode, nil
}

// startHTTP serves the API, MCP, the web inspector (on the same listener, with the
// API's keys and modes), metrics and health at cfg.HTTPAddr.
func startHTTP(ctx context.Context, cfg *config.Config, pool *pgxpool.Pool, store *memory.Store, client *river.Client[pgx.Tx],
	chat, embed llm.Provider, red *redact.Redactor, m *metrics.Metrics, tr *tracing.Tracing, logger *slog.Logger) (*http.Server, error) {
	hooks, err := webhook.NewWebhooks(webhook.Config{Pool: pool, SecretKey: cfg.WebhookSecretKey,
		Guard: webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate}})
	if err != nil {
		return nil, err
	}
	m.WatchWebhooks(hooks)
	v1, err := api.New(ctx, api.Config{Store: store, Pool: pool, Jobs: client, Redact: red, Embed: embed, Chat: chat,
		AskObserver: m.Answers(), ImportObserver: m.Imported, Logger: logger, Webhooks: hooks}.Settings(cfg))
	if err != nil {
		return nil, err
	}
	ui, err := inspector.New(inspector.Config{Store: store, Gate: v1, Jobs: client, Embed: embed, Logger: logger, Redact: red,
		SecureCookies: cfg.SecureCookies(), SessionTTL: cfg.InspectorSessionTTL})
	if err != nil {
		return nil, err
	}
	return serveHTTP(ctx, cfg.HTTPAddr, pool, m, tr, v1, ui, logger)
}

// newClient builds the River client with every worker: extraction (one job per scope
// at a time, see extract.Args), consolidation, the history curator and their periodic
// jobs.
func newClient(cfg *config.Config, pool *pgxpool.Pool, store *memory.Store, chat, embed llm.Provider, red *redact.Redactor,
	m *metrics.Metrics, tr *tracing.Tracing, logger *slog.Logger, drain bool) (*river.Client[pgx.Tx], error) {
	var examples *learning.Retriever
	if cfg.Examples > 0 {
		examples = learning.NewRetriever(store, cfg.Examples, cfg.ExamplesScope)
	}
	extractor, err := extract.NewWorker(extract.Config{
		Store: store, Chat: chat, Embed: embed, EmbedModel: embed.EmbedModel(),
		MaxCandidates: cfg.MaxCandidates, Examples: examples, Logger: logger, Observer: m,
		EpisodeTimeout: cfg.JobTimeout, JobBudget: jobBudget(cfg), MaxAttempts: cfg.MaxAttempts, Redact: red,
	})
	if err != nil {
		return nil, err
	}
	workers := river.NewWorkers()
	for _, add := range []func() error{
		func() error { return river.AddWorkerSafely(workers, extractor) },
		func() error { return river.AddWorkerSafely(workers, extract.NewEpisodeWorker(pool)) },
		func() error { return river.AddWorkerSafely(workers, extract.NewReconcileWorker(pool, logger)) },
	} {
		if err := add(); err != nil {
			return nil, err
		}
	}
	periodic, err := addConsolidation(workers, cfg, pool, store, chat, embed, m, logger, drain)
	if err != nil {
		return nil, err
	}
	curation, err := addRetention(workers, cfg, store, m, logger, drain)
	if err != nil {
		return nil, err
	}
	periodic = append(periodic, curation...)
	reembedder, err := reembed.NewWorker(reembed.Config{Store: store, Embed: embed, Model: embed.EmbedModel(), Logger: logger})
	if err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, reembedder); err != nil {
		return nil, err
	}
	sender, err := webhook.NewWorker(webhook.WorkerConfig{Pool: pool, SecretKey: cfg.WebhookSecretKey,
		Guard: webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate}, Render: api.WebhookRenderer(store, changes.NewReader(pool)),
		Timeout: cfg.WebhookTimeout, DisableAfter: cfg.WebhookDisableAfter, Observer: m, Logger: logger})
	if err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, sender); err != nil {
		return nil, err
	}
	if !drain {
		// After EMBED_MODEL changes, what the previous model embedded is embedded again
		// in the background; a drain run does not wait for it.
		periodic = append(periodic, extract.ReconcilePeriodicJob(0), reembed.PeriodicJob(0))
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues: map[string]river.QueueConfig{
			extract.Queue: {MaxWorkers: cfg.Workers},
			// Consolidation is background work: it gets a share of the LLM concurrency.
			consolidate.Queue: {MaxWorkers: max(1, cfg.Workers/4)},
			// Curation is database work, one run at a time.
			retention.Queue: {MaxWorkers: 1},
			// Re-embedding after a model change: one batch at a time, beside extraction.
			reembed.Queue: {MaxWorkers: 1},
			// Webhook deliveries: network waits, beside the model calls.
			webhook.Queue: {MaxWorkers: cfg.WebhookWorkers},
		},
		Workers:              workers,
		Middleware:           tr.RiverMiddleware(),
		PeriodicJobs:         periodic,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		MaxAttempts:          cfg.MaxAttempts,
		Logger:               app.Quiet(logger.With("component", "river")),
		FetchPollInterval:    pollInterval(drain),
		// A job that ends frees a slot; the next is fetched within 10 ms, not River's
		// default 100 ms, which would idle a worker for a third of a 250 ms model call.
		FetchCooldown: 10 * time.Millisecond,
	})
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return client, nil
}

// jobBudget is how long one extraction job may run: it ends its turn early enough that
// River never rescues it while it works (RESCUE_AFTER), keeping half the gap between
// RESCUE_AFTER and JOB_TIMEOUT, at most a minute, as a margin for database work.
func jobBudget(cfg *config.Config) time.Duration {
	return cfg.RescueAfter - min(time.Minute, (cfg.RescueAfter-cfg.JobTimeout)/2)
}

// reconcile gives every scope with pending episodes and no job one.
func reconcile(ctx context.Context, pool *pgxpool.Pool, client *river.Client[pgx.Tx], logger *slog.Logger) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		n, err := extract.Reconcile(ctx, tx, client)
		if n > 0 {
			logger.InfoContext(ctx, "gave scopes with pending episodes their extraction job", "scopes", n)
		}
		return err
	})
}

// addConsolidation registers the consolidation workers and returns the periodic sweep.
// Every process configures the sweep; River schedules it on the elected leader only. A
// --drain run ends once its jobs are done, so it schedules no sweep (one at start
// would consolidate half-extracted scopes); it still works consolidation jobs
// enqueued explicitly.
func addConsolidation(workers *river.Workers, cfg *config.Config, pool *pgxpool.Pool, store *memory.Store, chat llm.Chatter, embed llm.Provider,
	m *metrics.Metrics, logger *slog.Logger, drain bool) ([]*river.PeriodicJob, error) {
	consolidator, err := consolidate.NewWorker(consolidate.Config{
		Store: store, Chat: chat, Embed: embed, EmbedModel: embed.EmbedModel(),
		Threshold: cfg.ConsolidateThreshold, MaxCluster: cfg.ConsolidateMaxCluster, Logger: logger, Observer: m,
	})
	if err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, consolidator); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, consolidate.NewSweepWorker(pool, logger)); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, consolidate.NewIndexWorker(store, embed.EmbedModel(), logger)); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, consolidate.NewDropIndexesWorker(store, logger)); err != nil {
		return nil, err
	}
	if drain {
		return nil, nil
	}
	return []*river.PeriodicJob{consolidate.PeriodicJob(cfg.ConsolidateInterval)}, nil
}

// addRetention registers the history curator and returns its periodic job when
// RETAIN_HISTORY is set. The worker and its queue are there either way, so that a
// curation job left by a process configured with it is worked (and does nothing here)
// instead of waiting forever, which would also keep --drain from ending. A --drain run
// schedules no curation, as it schedules no consolidation; `beliefs curate` runs one.
func addRetention(workers *river.Workers, cfg *config.Config, store *memory.Store, m *metrics.Metrics,
	logger *slog.Logger, drain bool) ([]*river.PeriodicJob, error) {
	curator := retention.NewWorker(retention.Config{Store: store, Retain: cfg.RetainHistory, Keep: nonEmpty(cfg.ExamplesScope), Logger: logger, Observer: m})
	if err := river.AddWorkerSafely(workers, curator); err != nil {
		return nil, err
	}
	if drain || cfg.RetainHistory == 0 {
		return nil, nil
	}
	return []*river.PeriodicJob{retention.PeriodicJob(retention.DefaultInterval)}, nil
}

// floor maps CONFIDENCE_FLOOR to memory.Config, where zero means the default.
func floor(f float64) float64 {
	if f == 0 {
		return -1
	}
	return f
}

func pollInterval(drain bool) time.Duration {
	if drain {
		return 100 * time.Millisecond
	}
	return time.Second
}

// shutdown lets running jobs finish within timeout, then cancels them: a canceled job
// returns an error and is retried later, so nothing is lost.
func shutdown(client *river.Client[pgx.Tx], timeout time.Duration, now <-chan struct{}, logger *slog.Logger) error {
	soft, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-now: // a second signal: the soft stop ends here
			cancel()
		case <-soft.Done():
		}
	}()
	err := client.Stop(soft)
	if err == nil {
		return nil
	}
	if soft.Err() == context.DeadlineExceeded {
		logger.Warn("jobs still running after the shutdown timeout; canceling them", "timeout", timeout)
	}
	hard, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.StopAndCancel(hard); err != nil {
		return fmt.Errorf("stop river: %w", err)
	}
	return nil
}

func serveHTTP(ctx context.Context, addr string, pool *pgxpool.Pool, m *metrics.Metrics, tr *tracing.Tracing, v1 *api.Server, ui *inspector.Server,
	logger *slog.Logger) (*http.Server, error) {
	mux := http.NewServeMux()
	v1.Mount(mux) // the HTTP API under /v1/ and MCP at /mcp
	ui.Mount(mux) // the web inspector under /ui/
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := pool.Ping(ctx); err != nil {
			http.Error(w, "database unreachable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		pending, err := migrations.Pending(ctx, pool)
		if err != nil {
			http.Error(w, "migrations: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		if len(pending) > 0 {
			http.Error(w, fmt.Sprintf("migrations pending: %v", pending), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("HTTP_ADDR %s: %w", addr, err)
	}
	// Bounded reads and writes: a client that sends headers or a body a byte at a time, or
	// never reads its answer, does not hold a connection forever. The write bound leaves
	// an answer from a slow model (ask) its time; idle keep-alive connections close.
	srv := &http.Server{Addr: ln.Addr().String(), Handler: m.CountResponses(tr.Handler(mux)), ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: time.Minute, WriteTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("http server", "error", err)
		}
	}()
	return srv, nil
}

// checkModels asks the model servers for CHAT_MODEL and EMBED_MODEL before any job
// runs. A drain run stops on a failed check, with what to fix; a long-running worker
// says it once and goes on, since the models may still be downloading (compose starts
// the worker beside the pull).
func checkModels(ctx context.Context, cfg *config.Config, logger *slog.Logger, drain bool) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	window, err := app.CheckModels(ctx, cfg)
	switch {
	case err == nil:
		// A transcript whose prompt would not fit is extracted in segments
		// (docs/configuration.md, "The model's window").
		logger.InfoContext(ctx, "chat model window", "model", cfg.ChatModel, "tokens", window.Tokens, "from", window.Source,
			"answer_tokens", llm.DefaultAnswerTokens)
		return nil
	case drain:
		return fmt.Errorf("model check: %w", err)
	}
	logger.WarnContext(ctx, "model check failed; extraction retries until the models answer", "error", err)
	return nil
}

// nonEmpty is s as a list, empty when s is.
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
