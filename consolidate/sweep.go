package consolidate

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/credohq/credo/memory"
)

// SweepArgs is the periodic job that enqueues consolidation jobs.
type SweepArgs struct{}

// Kind is the River job kind.
func (SweepArgs) Kind() string { return "credo.consolidate_sweep" }

// InsertOpts puts the sweep on the consolidation queue, once while it waits: if the
// queue is backed up, sweeps do not pile up behind it.
func (SweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, UniqueOpts: uniqueWhileWaiting()}
}

// PeriodicJob schedules the sweep every interval, and once at start. Every process
// configures it; River runs periodic jobs on the elected leader only, so one sweep
// enqueues the scopes and the jobs spread over all workers.
func PeriodicJob(interval time.Duration) *river.PeriodicJob {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return river.NewPeriodicJob(river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) { return SweepArgs{}, nil },
		&river.PeriodicJobOpts{ID: SweepArgs{}.Kind(), RunOnStart: true})
}

// Inserter inserts River jobs in a transaction; *river.Client[pgx.Tx] is one.
type Inserter interface {
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Enqueue inserts a consolidation job for each scope in tx and returns how many it
// inserted: a scope whose job is still waiting or running gets no second one.
func Enqueue(ctx context.Context, tx pgx.Tx, jobs Inserter, scopes ...string) (int, error) {
	const chunk = 1000
	n := 0
	for start := 0; start < len(scopes); start += chunk {
		var params []river.InsertManyParams
		for _, s := range scopes[start:min(start+chunk, len(scopes))] {
			if s == "" {
				return n, errNoScope
			}
			params = append(params, river.InsertManyParams{Args: Args{Scope: s}})
		}
		res, err := jobs.InsertManyTx(ctx, tx, params)
		if err != nil {
			return n, fmt.Errorf("insert consolidation jobs: %w", err)
		}
		for _, r := range res {
			if !r.UniqueSkippedAsDuplicate {
				n++
			}
		}
	}
	return n, nil
}

// Sweep enqueues, in tx, one consolidation job per scope with an active belief changed
// after the scope's watermark (or never consolidated), and returns how many it
// inserted. Beliefs that a pass superseded are not active, so a pass's own revisions
// do not bring its scope back.
func Sweep(ctx context.Context, tx pgx.Tx, jobs Inserter) (int, error) {
	scopes, err := memory.ChangedScopesTx(ctx, tx)
	if err != nil {
		return 0, err
	}
	return Enqueue(ctx, tx, jobs, scopes...)
}

// SweepWorker is the River worker of SweepArgs.
type SweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	pool *pgxpool.Pool
	log  *slog.Logger
}

// NewSweepWorker returns the sweep's worker; logger may be nil.
func NewSweepWorker(pool *pgxpool.Pool, logger *slog.Logger) *SweepWorker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &SweepWorker{pool: pool, log: logger}
}

// Work enqueues the changed scopes and completes the sweep in one transaction.
func (w *SweepWorker) Work(ctx context.Context, job *river.Job[SweepArgs]) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("consolidation sweep: %w", err)
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		n, err := Sweep(ctx, tx, client)
		if err != nil {
			return err
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("complete job %d: %w", job.ID, err)
		}
		w.log.InfoContext(ctx, "consolidation sweep", "enqueued", n)
		return nil
	})
}
