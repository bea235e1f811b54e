package memory

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// deadlockAttempts bounds how often a transaction aborted to break a deadlock is run.
const deadlockAttempts = 3

// pgerrcodeDeadlock is Postgres' deadlock_detected.
const pgerrcodeDeadlock = "40P01"

// inTxRetryingDeadlocks runs fn in a transaction, again when Postgres aborted it to
// break a deadlock. Table-wide locks meet row locks in orders no rule can keep: the
// first registration of an embedding model builds an index on belief, then on
// revision_event, while a purge deletes events, then beliefs. fn must be safe to run
// again: whatever it did was rolled back.
func (s *Store) inTxRetryingDeadlocks(ctx context.Context, fn func(pgx.Tx) error) error {
	return retryingDeadlocks(ctx, func() error { return pgx.BeginFunc(ctx, s.pool, fn) })
}

// retryingDeadlocks runs fn, again when Postgres aborted it to break a deadlock, up to
// deadlockAttempts times. CREATE and DROP INDEX CONCURRENTLY wait for the transactions
// of the whole database, so two of them, for two scopes, can wait for each other. fn
// must be safe to run again.
func retryingDeadlocks(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		var pgErr *pgconn.PgError
		if err == nil || attempt == deadlockAttempts || !errors.As(err, &pgErr) || pgErr.Code != pgerrcodeDeadlock {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}
