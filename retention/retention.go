// Package retention is the periodic curator of history: with RETAIN_HISTORY set, the
// elected leader enqueues a job every interval that purges the beliefs retired longer
// ago than the period, with every copy of their text (memory.Store.Curate).
package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/memory"
)

// Queue is the River queue of curation jobs. It is its own, with one worker, so that a
// curation never waits behind a backlog of LLM-bound jobs nor holds one of their slots.
const Queue = "retention"

// DefaultInterval is how often the leader enqueues a curation.
const DefaultInterval = time.Hour

// Args is the curation job. It carries no period: each worker curates with its own
// RETAIN_HISTORY, so a process without one never removes anything.
type Args struct{}

// Kind is the River job kind.
func (Args) Kind() string { return "credo.curate" }

// InsertOpts puts the job on its queue, once while it waits or runs: curations do not
// pile up behind a slow one.
func (Args) InsertOpts() river.InsertOpts {
	return riverjobs.OnceOnQueue(Queue)
}

// PeriodicJob schedules a curation every interval, and once at start. Every process
// configures it; River runs periodic jobs on the elected leader only, so one process
// curates at a time.
func PeriodicJob(interval time.Duration) *river.PeriodicJob {
	return riverjobs.Periodic(Args{}, interval, DefaultInterval)
}

// Observer receives what each curation did.
type Observer interface {
	Curated(r Report)
}

// Report is what one curation job did: counts, never a statement.
type Report struct {
	Scopes   int
	Beliefs  int
	Episodes int
	// Counts is the rows removed per table, over every scope.
	Counts   map[string]int64
	Duration time.Duration
	// Err is why the curation stopped or skipped scopes; what it removed before is
	// removed all the same, and counted.
	Err error
}

// Config configures a Worker.
type Config struct {
	Store *memory.Store
	// Retain is RETAIN_HISTORY; zero keeps history forever and the job does nothing.
	Retain time.Duration
	// Keep are scopes never curated: the examples scope (EXAMPLES_SCOPE).
	Keep     []string
	Logger   *slog.Logger
	Observer Observer
}

// Worker is the River worker of Args.
type Worker struct {
	river.WorkerDefaults[Args]
	cfg Config
}

// withDefaults returns c with the defaults of what it leaves zero.
func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// NewWorker returns the curation worker.
func NewWorker(cfg Config) *Worker {
	return &Worker{cfg: cfg.withDefaults()}
}

// Work curates history. Each scope commits on its own, so a job cut short (by its
// timeout, or a shutdown) keeps what it removed, and the next one goes on from there.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	if w.cfg.Retain <= 0 {
		// A job left by a process configured with RETAIN_HISTORY: this one keeps history.
		w.cfg.Logger.DebugContext(ctx, "history curation skipped: RETAIN_HISTORY is not set")
		return nil
	}
	start := time.Now()
	curated, err := w.cfg.Store.Curate(ctx, w.cfg.Retain, false, w.cfg.Keep...)
	rep := Report{Counts: map[string]int64{}, Duration: time.Since(start), Err: err}
	if curated != nil {
		rep.Scopes = len(curated.Scopes)
		for _, s := range curated.Scopes {
			rep.Beliefs += len(s.BeliefIDs)
			rep.Episodes += len(s.EpisodeIDs)
			for table, n := range s.Counts {
				rep.Counts[table] += n
			}
		}
	}
	if w.cfg.Observer != nil {
		w.cfg.Observer.Curated(rep)
	}
	// Counts only, never a statement; an error names the scope that failed, as the
	// job's row in River does.
	attrs := []any{"retain", w.cfg.Retain, "scopes", rep.Scopes, "beliefs", rep.Beliefs, "episodes", rep.Episodes,
		"revision_events", rep.Counts["revision_event"], "conflicts", rep.Counts["belief_conflict"],
		"river_jobs", rep.Counts["river_job"], "duration", rep.Duration}
	if err != nil {
		w.cfg.Logger.WarnContext(ctx, "history curation failed", append(attrs, "error", err)...)
		return err
	}
	w.cfg.Logger.InfoContext(ctx, "history curated", attrs...)
	return nil
}
