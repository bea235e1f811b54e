package extract

import (
	"cmp"
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/memory"
)

// ReconcileWorker is the River worker of ReconcileArgs: it runs Reconcile and completes
// the job in one transaction.
type ReconcileWorker = riverjobs.TxWorker[ReconcileArgs]

// NewReconcileWorker returns the worker; logger may be nil.
func NewReconcileWorker(pool *pgxpool.Pool, logger *slog.Logger) *ReconcileWorker {
	logger = cmp.Or(logger, slog.New(slog.DiscardHandler))
	return riverjobs.NewInsertWorker[ReconcileArgs](pool, Reconcile, func(ctx context.Context, n int) {
		if n > 0 {
			logger.InfoContext(ctx, "scopes with pending episodes had no extraction job; inserted one each", "scopes", n)
		}
	})
}

// EpisodeWorker works the per-episode jobs of earlier versions (EpisodeArgs): it makes
// sure the episode's scope has a job, which extracts the episode in its turn. Both it
// and ReconcileWorker make sure pending episodes have their scope's job.
type EpisodeWorker = riverjobs.TxWorker[EpisodeArgs]

// NewEpisodeWorker returns the worker: it inserts the scope's job, unless the episode is
// gone or no longer pending.
func NewEpisodeWorker(pool *pgxpool.Pool) *EpisodeWorker {
	return riverjobs.NewTxWorker(pool, func(ctx context.Context, tx pgx.Tx, jobs *river.Client[pgx.Tx], job *river.Job[EpisodeArgs]) error {
		scope, pending, err := memory.PendingEpisodeScopeTx(ctx, tx, job.Args.EpisodeID)
		if err != nil || !pending {
			return err
		}
		_, err = insertScopeJobs(ctx, tx, jobs, []string{scope})
		return err
	})
}
