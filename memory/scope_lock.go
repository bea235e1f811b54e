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

// ScopeErasedTx takes the scope's lock in tx and says whether the scope holds no belief
// and no episode: a whole-scope purge erased it (or it never held any). A writer that
// worked on the scope outside the lock (a consolidation pass, an index build) asks it
// before it writes a row naming the scope, or enqueues a job that names it, so that
// nothing names the scope after its purge returned.
func ScopeErasedTx(ctx context.Context, tx pgx.Tx, scope string) (bool, error) {
	if err := lockScope(ctx, tx, scope); err != nil {
		return false, err
	}
	var held bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM belief WHERE scope = $1)
		OR EXISTS (SELECT 1 FROM episode WHERE scope = $1)`, scope).Scan(&held)
	if err != nil {
		return false, fmt.Errorf("look up scope %q: %w", scope, err)
	}
	return !held, nil
}
