package memory

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/internal/pgretry"
)

// inTxRetryingDeadlocks runs fn in a transaction, again when Postgres aborted it to
// break a deadlock. Table-wide locks meet row locks in orders no rule can keep: the
// first registration of an embedding model builds an index on belief, then on
// revision_event, while a purge deletes events, then beliefs. fn must be safe to run
// again: whatever it did was rolled back.
func (s *Store) inTxRetryingDeadlocks(ctx context.Context, fn func(pgx.Tx) error) error {
	return retryingDeadlocks(ctx, func() error { return pgx.BeginFunc(ctx, s.pool, fn) })
}

// retryingDeadlocks runs fn, again when Postgres aborted it to break a deadlock (see
// pgretry.OnDeadlock). CREATE and DROP INDEX CONCURRENTLY wait for the transactions of
// the whole database, so two of them, for two scopes, can wait for each other.
func retryingDeadlocks(ctx context.Context, fn func() error) error {
	return pgretry.OnDeadlock(ctx, fn)
}
