package consolidate

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/memory"
)

// SweepArgs is the periodic job that enqueues consolidation jobs.
type SweepArgs struct{}

// Kind is the River job kind.
func (SweepArgs) Kind() string { return "credo.consolidate_sweep" }

// InsertOpts puts the sweep on the consolidation queue, once while it waits: if the
// queue is backed up, sweeps do not pile up behind it.
func (SweepArgs) InsertOpts() river.InsertOpts {
	return riverjobs.OnceOnQueue(Queue)
}

// PeriodicJob schedules the sweep every interval, and once at start. Every process
// configures it; River runs periodic jobs on the elected leader only, so one sweep
// enqueues the scopes and the jobs spread over all workers.
func PeriodicJob(interval time.Duration) *river.PeriodicJob {
	return riverjobs.Periodic(SweepArgs{}, interval, DefaultInterval)
}

// Inserter inserts River jobs in a transaction; *river.Client[pgx.Tx] is one.
type Inserter = riverjobs.Inserter

// Enqueue inserts a consolidation job for each scope in tx and returns how many it
// inserted: a scope whose job is still waiting or running gets no second one.
func Enqueue(ctx context.Context, tx pgx.Tx, jobs Inserter, scopes ...string) (int, error) {
	if slices.Contains(scopes, "") {
		return 0, errNoScope
	}
	n, err := riverjobs.InsertMany(ctx, tx, jobs, scopes, func(s string) Args { return Args{Scope: s} })
	if err != nil {
		return n, fmt.Errorf("insert consolidation jobs: %w", err)
	}
	return n, nil
}

// Sweep enqueues, in tx, one consolidation job per scope with an active belief changed
// after the scope's watermark (or never consolidated), and returns how many it
// inserted. Beliefs that a pass superseded are not active, so a pass's own revisions
// do not bring its scope back.
//
// It also enqueues the drop of erased scopes' indexes when some are left to do (a purge
// whose caller went before it could drop them): their definitions name the scopes.
func Sweep(ctx context.Context, tx pgx.Tx, jobs Inserter) (int, error) {
	scopes, err := memory.ChangedScopesTx(ctx, tx)
	if err != nil {
		return 0, err
	}
	n, err := Enqueue(ctx, tx, jobs, scopes...)
	if err != nil {
		return n, err
	}
	pending, err := memory.IndexDropsPendingTx(ctx, tx)
	if err != nil || !pending {
		return n, err
	}
	if _, err := jobs.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: DropIndexesArgs{}}}); err != nil {
		return n, fmt.Errorf("enqueue the drop of erased indexes: %w", err)
	}
	return n, nil
}

// SweepWorker is the River worker of SweepArgs: it enqueues the changed scopes and
// completes the sweep in one transaction.
type SweepWorker = riverjobs.TxWorker[SweepArgs]

// NewSweepWorker returns the sweep's worker; logger may be nil.
func NewSweepWorker(pool *pgxpool.Pool, logger *slog.Logger) *SweepWorker {
	logger = cmp.Or(logger, slog.New(slog.DiscardHandler))
	return riverjobs.NewInsertWorker[SweepArgs](pool, Sweep, func(ctx context.Context, n int) {
		logger.InfoContext(ctx, "consolidation sweep", "enqueued", n)
	})
}
