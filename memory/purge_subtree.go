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

// PurgeSubtree erases every scope starting with prefix, as Purge of All does for one:
// each scope in its own transaction under its lock, with its own tombstone, so a scope is
// erased whole or not at all, and a purge cut short is finished by running it again. An
// extraction of such a scope in flight finds its episode gone and stores nothing.
// A scope created after the scopes are listed is not erased.
func (s *Store) PurgeSubtree(ctx context.Context, prefix string) (*SubtreePurged, error) {
	if strings.ContainsRune(prefix, 0) {
		return nil, transcript.InputErrorf(ErrSelection, "prefix", "contains a NUL character")
	}
	scopes, err := s.ErasableScopes(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := &SubtreePurged{Prefix: prefix, Scopes: []ScopePurged{}, Counts: map[string]int64{}}
	for _, scope := range scopes {
		p, err := s.Purge(ctx, Selection{Scope: scope, All: true})
		if err != nil {
			return out, fmt.Errorf("purge subtree %q: %w", prefix, err)
		}
		out.Scopes = append(out.Scopes, ScopePurged{Scope: scope, Purged: p})
		for table, n := range p.Counts {
			out.Counts[table] += n
		}
	}
	return out, nil
}
