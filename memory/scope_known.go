package memory

import (
	"cmp"
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/transcript"
)

// ScopeQuery names the scope a caller reads, for KnownScope.
type ScopeQuery struct {
	Scope string
	// Inherit says the read shows the ancestors' beliefs too: the scope is known when
	// it or one of its ancestors is.
	Inherit bool
	// Sees says which scopes the caller may see, the only ones suggested; nil: every one.
	Sees func(scope string) bool
}

// UnknownScopeError is a read of a scope that has never held an episode or a belief
// (with Inherit, nor has any of its ancestors): most likely a misspelt name, which a
// read would answer as an empty memory. It is ErrNotFound (errors.Is).
type UnknownScopeError struct {
	Scope string
	// Nearest is the scope the caller may see that is nearest to Scope by edit
	// distance, when one is near (see nearEnough); "" otherwise.
	Nearest string
	// Empty says the caller may see no scope at all: memory holds nothing yet that
	// Scope could have meant instead.
	Empty bool
}

func (e *UnknownScopeError) Error() string {
	switch {
	case e.Nearest != "":
		return fmt.Sprintf("no scope %s (did you mean %s?)", e.Scope, e.Nearest)
	case e.Empty:
		return fmt.Sprintf("no scope %s: memory holds no scope yet", e.Scope)
	}
	return "no scope " + e.Scope
}

// Is makes an unknown scope not found, as an unknown id is.
func (e *UnknownScopeError) Is(target error) bool { return target == ErrNotFound }

// KnownScope is nil when memory has ever held an episode or a belief of q.Scope (with
// q.Inherit, or of one of its ancestors), and an *UnknownScopeError otherwise, naming
// the nearest scope q.Sees allows. A read that returned anything of the scope needs no
// check: its rows prove the scope known.
//
// The check is one router query per scope it names (on Citus, on that scope's shard
// alone); only when the scope is unknown does the suggestion list every scope, which
// spans shards (docs/operations.md lists it).
func (s *Store) KnownScope(ctx context.Context, q ScopeQuery) error {
	scopes := []string{q.Scope}
	if q.Inherit {
		scopes = append(scopes, Ancestors(q.Scope)...)
	}
	for _, scope := range scopes {
		var held bool
		err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM belief WHERE scope = $1)
			OR EXISTS (SELECT 1 FROM episode WHERE scope = $1)`, scope).Scan(&held)
		if err != nil {
			return fmt.Errorf("look up scope %q: %w", scope, err)
		}
		if held {
			return nil
		}
	}
	return s.unknownScope(ctx, q)
}

// everyScopeSQL is the scopes of a table (%s): a skip scan over the (scope, id) primary
// key, one index probe per scope, however many rows each holds.
const everyScopeSQL = `
	WITH RECURSIVE scopes AS (
		(SELECT scope FROM %[1]s ORDER BY scope LIMIT 1)
		UNION ALL
		SELECT (SELECT t.scope FROM %[1]s t WHERE t.scope > s.scope ORDER BY t.scope LIMIT 1)
		FROM scopes s WHERE s.scope IS NOT NULL
	)
	SELECT scope FROM scopes WHERE scope IS NOT NULL`

// shardedEveryScopeSQL is everyScopeSQL on Citus, which runs no recursive query across
// shards: each shard lists its own scopes.
const shardedEveryScopeSQL = `SELECT DISTINCT scope FROM %s`

// unknownScope is the error for q.Scope, unknown: every scope that holds an episode or
// a belief, of those q.Sees allows, is a candidate for the suggestion.
func (s *Store) unknownScope(ctx context.Context, q ScopeQuery) error {
	citus, err := onCitus(ctx, s.db)
	if err != nil {
		return fmt.Errorf("list scopes: %w", err)
	}
	query := everyScopeSQL
	if citus {
		query = shardedEveryScopeSQL
	}
	out := &UnknownScopeError{Scope: q.Scope, Empty: true}
	best, limit := 0, nearEnough(q.Scope)
	for _, table := range []string{"belief", "episode"} {
		rows, err := s.db.Query(ctx, fmt.Sprintf(query, table))
		if err != nil {
			return fmt.Errorf("list scopes of %s: %w", table, err)
		}
		scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("list scopes of %s: %w", table, err)
		}
		for _, scope := range scopes {
			if q.Sees != nil && !q.Sees(scope) {
				continue
			}
			out.Empty = false
			d := transcript.EditDistance(q.Scope, scope, limit)
			if d > limit {
				continue
			}
			if out.Nearest == "" || cmp.Or(cmp.Compare(d, best), cmp.Compare(scope, out.Nearest)) < 0 {
				out.Nearest, best = scope, d
			}
		}
	}
	return out
}

// nearEnough is how many edits from scope a name may be and still be suggested: a
// quarter of its length, at least one and at most two, as typos are (a letter missed,
// doubled or swapped), so that user:bob is not offered for user:ana.
func nearEnough(scope string) int {
	return max(1, min(2, utf8.RuneCountInString(scope)/4))
}
