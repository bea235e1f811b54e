package extract

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/credohq/credo/memory"
)

// ReconcileWorker is the River worker of ReconcileArgs and of EpisodeArgs: both make
// sure pending episodes have their scope's job.
type ReconcileWorker struct {
	river.WorkerDefaults[ReconcileArgs]
	pool *pgxpool.Pool
	log  *slog.Logger
}

// NewReconcileWorker returns the worker; logger may be nil.
func NewReconcileWorker(pool *pgxpool.Pool, logger *slog.Logger) *ReconcileWorker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &ReconcileWorker{pool: pool, log: logger}
}

// Work runs Reconcile and completes the job in one transaction.
func (w *ReconcileWorker) Work(ctx context.Context, job *river.Job[ReconcileArgs]) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		n, err := Reconcile(ctx, tx, client)
		if err != nil {
			return err
		}
		if n > 0 {
			w.log.InfoContext(ctx, "scopes with pending episodes had no extraction job; inserted one each", "scopes", n)
		}
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}

// EpisodeWorker works the per-episode jobs of earlier versions (EpisodeArgs): it makes
// sure the episode's scope has a job, which extracts the episode in its turn.
type EpisodeWorker struct {
	river.WorkerDefaults[EpisodeArgs]
	pool *pgxpool.Pool
}

// NewEpisodeWorker returns the worker.
func NewEpisodeWorker(pool *pgxpool.Pool) *EpisodeWorker { return &EpisodeWorker{pool: pool} }

// Work inserts the scope's job, unless the episode is gone or no longer pending.
func (w *EpisodeWorker) Work(ctx context.Context, job *river.Job[EpisodeArgs]) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		scope, pending, err := memory.PendingEpisodeScopeTx(ctx, tx, job.Args.EpisodeID)
		if err != nil {
			return err
		}
		if pending {
			if _, err := insertScopeJobs(ctx, tx, client, []string{scope}); err != nil {
				return err
			}
		}
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}
