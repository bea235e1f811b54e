package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ScopeNames asks which scopes rows name: Scope alone, or every scope starting with
// Prefix when Scope is empty (an empty Prefix is every scope).
type ScopeNames struct {
	Scope  string
	Prefix string
}

// ScopeNamer is an Announcer that keeps rows naming scopes (the change feed, webhook
// deliveries): a purge of a whole scope erases a scope that only its rows still name,
// so it tells which it names. memory asks it when its announcer implements it.
type ScopeNamer interface {
	NamedScopesTx(ctx context.Context, tx pgx.Tx, q ScopeNames) ([]string, error)
}

// scopeTables are memory's tables that name a scope, each of a scope's rows, whatever
// holds beliefs or episodes: partial purges may have removed every belief and episode of
// a scope while its watermark, entities or judgments stay.
var scopeTables = []string{"belief", "episode", "revision_event", "belief_conflict", "belief_dependency",
	"scope_consolidation", "consolidation_judgment", "scope_vector_index", "entity", "entity_alias", "slot_synonym", "scope_common_words"}

// namedScopes is the scopes that any row names, as q asks: memory's tables, River's jobs
// that a purge of the scope deletes (not a running one, let finish, nor a completed
// one, which River's cleaner removes), and the announcer's rows. A whole-scope purge
// works on each: nothing naming the scope outlives it.
func (s *Store) namedScopes(ctx context.Context, tx pgx.Tx, q ScopeNames) ([]string, error) {
	var (
		parts []string
		arg   = q.Prefix
	)
	if q.Scope != "" {
		// One router probe per table on Citus.
		arg = q.Scope
		for _, t := range scopeTables {
			parts = append(parts, fmt.Sprintf("SELECT $1::text WHERE EXISTS (SELECT 1 FROM %s WHERE scope = $1)", t))
		}
	} else {
		for _, t := range scopeTables {
			parts = append(parts, fmt.Sprintf("SELECT DISTINCT scope FROM %s WHERE starts_with(scope, $1)", t))
		}
	}
	rows, err := tx.Query(ctx, strings.Join(parts, " UNION "), arg)
	if err != nil {
		return nil, fmt.Errorf("scopes named: %w", err)
	}
	scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("scopes named: %w", err)
	}
	jobs, err := jobScopes(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	scopes = append(scopes, jobs...)
	if namer, ok := s.announcer.(ScopeNamer); ok {
		more, err := namer.NamedScopesTx(ctx, tx, q)
		if err != nil {
			return nil, fmt.Errorf("scopes named: %w", err)
		}
		scopes = append(scopes, more...)
	}
	slices.Sort(scopes)
	return slices.Compact(scopes), nil
}

// ErasableScopes is every scope starting with prefix that a whole-scope purge would
// find (any row names it, see namedScopes), in order: what PurgeSubtree erases. An
// empty prefix is every scope.
func (s *Store) ErasableScopes(ctx context.Context, prefix string) ([]string, error) {
	var scopes []string
	err := pgx.BeginTxFunc(ctx, s.db, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		scopes, err = s.namedScopes(ctx, tx, ScopeNames{Prefix: prefix})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("scopes under %q: %w", prefix, err)
	}
	return scopes, nil
}
