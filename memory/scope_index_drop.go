package memory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// indexLockKey is the session lock a build holds on its index's name, which keeps
// DropErasedIndexes off it until the build has registered or dropped it.
func indexLockKey(name string) string { return "credo:scope_index_name:" + name }

// unregisterScopeIndexes removes the registrations of scope's own indexes (on table
// only, unless it is empty; for model only, unless it is empty) and returns their names.
func unregisterScopeIndexes(ctx context.Context, tx pgx.Tx, scope string, table searchTable, model string) ([]string, error) {
	rows, err := tx.Query(ctx, `DELETE FROM scope_vector_index WHERE scope = $1 AND ($2 = '' OR tbl = $2) AND ($3 = '' OR model = $3)
		RETURNING name`, scope, string(table), model)
	if err != nil {
		return nil, fmt.Errorf("unregister the indexes of %q: %w", scope, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("unregister the indexes of %q: %w", scope, err)
	}
	return names, nil
}

// recordIndexDrops records the indexes names as drops to do (scope_index_drop), for
// DropErasedIndexes.
func recordIndexDrops(ctx context.Context, db querier, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if _, err := db.Exec(ctx, `INSERT INTO scope_index_drop (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING`,
		names); err != nil {
		return fmt.Errorf("record the indexes to drop: %w", err)
	}
	return nil
}

// dropIndex drops the index name, if it exists, and its drop to do.
func dropIndex(ctx context.Context, conn querier, name string) error {
	err := retryingDeadlocks(ctx, func() error {
		_, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+pgx.Identifier{name}.Sanitize())
		return err
	})
	if err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, "DELETE FROM scope_index_drop WHERE name = $1", name); err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	return nil
}

// IndexDrops says what DropErasedIndexes did.
type IndexDrops struct {
	// Dropped counts the indexes dropped; Left those it left to a later run: a build
	// in progress (it drops its index itself if the scope went meanwhile), or a drop
	// that failed.
	Dropped, Left int
}

// DropErasedIndexes drops the scope indexes recorded as drops to do: those of scopes a
// purge erased or that shrank, and those of builds cut short. A purge records them in
// its transaction and calls this once it committed, and the worker runs it after each
// consolidation sweep that finds some left, so that an index whose definition names an
// erased scope is dropped whatever became of the purge's caller. DROP INDEX
// CONCURRENTLY cannot run in a transaction, and waits for any other index build on the
// table: an error leaves the rest to the next run.
func (s *Store) DropErasedIndexes(ctx context.Context) (IndexDrops, error) {
	var out IndexDrops
	rows, err := s.pool.Query(ctx, "SELECT name FROM scope_index_drop ORDER BY created_at, name")
	if err != nil {
		return out, fmt.Errorf("read the indexes to drop: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(names) == 0 {
		return out, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return out, err
	}
	defer conn.Release()
	for i, name := range names {
		var free bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext($1))", indexLockKey(name)).Scan(&free); err != nil {
			return IndexDrops{Dropped: out.Dropped, Left: len(names) - i}, err
		}
		if !free {
			out.Left++
			continue
		}
		err := dropIndex(ctx, conn, name)
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", indexLockKey(name))
		if err != nil {
			return IndexDrops{Dropped: out.Dropped, Left: len(names) - i}, err
		}
		out.Dropped++
	}
	return out, nil
}

// IndexDropsPendingTx says whether drops of scope indexes are left to do.
func IndexDropsPendingTx(ctx context.Context, tx pgx.Tx) (bool, error) {
	var pending bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM scope_index_drop)").Scan(&pending); err != nil {
		return false, fmt.Errorf("look for indexes to drop: %w", err)
	}
	return pending, nil
}

// scopeIndexes unregisters the scope's own indexes, whose definitions name it, and
// records them as drops to do, in the purge's transaction: Purge drops them once it
// committed, and if it cannot (its caller went, another build holds the table), the
// worker does.
func (p *purge) scopeIndexes(ctx context.Context) error {
	if !p.sel.All {
		return nil
	}
	names, err := unregisterScopeIndexes(ctx, p.tx, p.sel.Scope, "", "")
	if err != nil {
		return err
	}
	if p.indexes = len(names); p.indexes > 0 {
		p.out.Counts["scope_vector_index"] = int64(len(names))
	}
	return recordIndexDrops(ctx, p.tx, names)
}
