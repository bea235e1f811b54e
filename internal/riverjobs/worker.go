package riverjobs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// TxWorker is a River worker of T whose work and the job's completion commit in one
// transaction, so that the jobs the work inserts exist exactly when the job completed.
type TxWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	pool *pgxpool.Pool
	work func(ctx context.Context, tx pgx.Tx, jobs *river.Client[pgx.Tx], job *river.Job[T]) error
}

// NewTxWorker returns a worker that runs work in a transaction of pool, with the River
// client that runs the job, and completes the job in the same transaction.
func NewTxWorker[T river.JobArgs](pool *pgxpool.Pool, work func(ctx context.Context, tx pgx.Tx, jobs *river.Client[pgx.Tx], job *river.Job[T]) error) *TxWorker[T] {
	return &TxWorker[T]{pool: pool, work: work}
}

// Work runs the work and completes the job in one transaction.
func (w *TxWorker[T]) Work(ctx context.Context, job *river.Job[T]) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", job.Kind, err)
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if err := w.work(ctx, tx, client, job); err != nil {
			return err
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("complete job %d: %w", job.ID, err)
		}
		return nil
	})
}

// NewInsertWorker returns a TxWorker whose work is insert, which inserts jobs in the
// transaction and returns how many; inserted is told that number before the commit.
func NewInsertWorker[T river.JobArgs](pool *pgxpool.Pool, insert func(ctx context.Context, tx pgx.Tx, jobs Inserter) (int, error), inserted func(ctx context.Context, n int)) *TxWorker[T] {
	return NewTxWorker(pool, func(ctx context.Context, tx pgx.Tx, jobs *river.Client[pgx.Tx], _ *river.Job[T]) error {
		n, err := insert(ctx, tx, jobs)
		if err != nil {
			return err
		}
		inserted(ctx, n)
		return nil
	})
}
