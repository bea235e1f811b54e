package memory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// lockScopeSQL serializes writers of one scope until their transaction ends.
const lockScopeSQL = "SELECT pg_advisory_xact_lock(hashtext('credo:scope'), hashtext($1))"

// queueLockScope queues the scope's lock in b, for a writer that touches rows of the
// scope (an episode's state) before it calls ApplyTx: the lock comes first, as in every
// writer, so that a writer and a purge of the scope never wait on each other in turn.
func queueLockScope(b *pgx.Batch, scope string) { b.Queue(lockScopeSQL, scope) }

func lockScope(ctx context.Context, tx pgx.Tx, scope string) error {
	if _, err := tx.Exec(ctx, lockScopeSQL, scope); err != nil {
		return fmt.Errorf("lock scope %q: %w", scope, err)
	}
	return nil
}
