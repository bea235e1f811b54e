package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/transcript"
)

// SubtreePurged is what PurgeSubtree erased: one Purge of a whole scope per scope.
type SubtreePurged struct {
	Prefix string `json:"prefix"`
	// Scopes are the purges, in scope order; empty when nothing matched.
	Scopes []ScopePurged `json:"scopes"`
	// Counts is the rows removed per table, over every scope.
	Counts map[string]int64 `json:"counts"`
}

// ScopePurged is the purge of one scope of a subtree.
type ScopePurged struct {
	Scope string `json:"scope"`
	*Purged
}

// SubtreeScopes is every scope starting with prefix that holds beliefs or episodes, in
// order. An empty prefix is every scope.
func (s *Store) SubtreeScopes(ctx context.Context, prefix string) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT scope FROM belief WHERE starts_with(scope, $1)
		UNION SELECT scope FROM episode WHERE starts_with(scope, $1) ORDER BY 1`, prefix)
	if err != nil {
		return nil, fmt.Errorf("scopes under %q: %w", prefix, err)
	}
	scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("scopes under %q: %w", prefix, err)
	}
	return scopes, nil
}

// subtreePurgeKey is the lock that keeps imports and subtree purges apart: an import
// holds it shared from the start of its transaction to its end, a subtree purge
// exclusively while it lists and erases its scopes.
const subtreePurgeKey = "credo:subtree-purge"

// lockImportTx takes the subtree purges' lock shared in an import's transaction, before
// any scope's lock (see subtreePurgeKey).
func lockImportTx(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock_shared(hashtext($1))", subtreePurgeKey); err != nil {
		return fmt.Errorf("wait for subtree purges: %w", err)
	}
	return nil
}

// PurgeSubtree erases every scope starting with prefix that any row names (see
// ErasableScopes), as Purge of All does for one: each scope in its own transaction under
// its lock, with its own tombstone, so a scope is erased whole or not at all, and a
// purge cut short is finished by running it again. An extraction of such a scope in
// flight finds its episode gone and stores nothing.
//
// It first waits for the imports in flight, and holds imports back until it returns
// (subtreePurgeKey): an import that was writing into the subtree is erased with it,
// rather than committed after an answer that said nothing was there. A scope that an
// episode creates after the scopes are listed is not erased.
func (s *Store) PurgeSubtree(ctx context.Context, prefix string) (*SubtreePurged, error) {
	if strings.ContainsRune(prefix, 0) {
		return nil, transcript.InputErrorf(ErrSelection, "prefix", "contains a NUL character")
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("purge subtree %q: %w", prefix, err)
	}
	defer conn.Release()
	if err := trySessionLock(ctx, conn, subtreePurgeKey); err != nil {
		return nil, fmt.Errorf("purge subtree %q: wait for imports: %w", prefix, err)
	}
	out, indexes, err := s.purgeSubtreeLocked(ctx, prefix)
	// Released before the indexes are dropped: a drop waits for transactions on the
	// table, an import among them, which waits for this lock.
	_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", subtreePurgeKey)
	if indexes > 0 {
		if dropped := s.dropErasedIndexesNow(ctx); !dropped {
			for i := range out.Scopes {
				out.Scopes[i].IndexesLeft = out.Scopes[i].Counts["scope_vector_index"] > 0
			}
		}
	}
	return out, err
}

// purgeSubtreeLocked is PurgeSubtree under the lock, leaving the scopes' indexes to drop;
// it returns how many there are.
func (s *Store) purgeSubtreeLocked(ctx context.Context, prefix string) (*SubtreePurged, int, error) {
	scopes, err := s.ErasableScopes(ctx, prefix)
	if err != nil {
		return nil, 0, err
	}
	out := &SubtreePurged{Prefix: prefix, Scopes: []ScopePurged{}, Counts: map[string]int64{}}
	indexes := 0
	for _, scope := range scopes {
		p, n, err := s.purge(ctx, Selection{Scope: scope, All: true})
		if err != nil {
			return out, indexes, fmt.Errorf("purge subtree %q: %w", prefix, err)
		}
		indexes += n
		out.Scopes = append(out.Scopes, ScopePurged{Scope: scope, Purged: p})
		for table, n := range p.Counts {
			out.Counts[table] += n
		}
	}
	return out, indexes, nil
}
