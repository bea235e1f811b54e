package memory

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKnownScope: a scope that never held an episode or a belief is unknown, not
// found, with the nearest scope the caller may see; an episode alone, a belief alone,
// or (inherited) an ancestor's belief makes it known; a purge makes it unknown again.
func TestKnownScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	unknown := func(q ScopeQuery) *UnknownScopeError {
		t.Helper()
		err := store.KnownScope(ctx, q)
		require.ErrorIs(t, err, ErrNotFound, q.Scope)
		var u *UnknownScopeError
		require.ErrorAs(t, err, &u)
		return u
	}

	u := unknown(ScopeQuery{Scope: "user:ana"})
	require.True(t, u.Empty, "memory holds no scope yet")
	require.Empty(t, u.Nearest)
	require.EqualError(t, u, "no scope user:ana: memory holds no scope yet")

	insertEpisode(t, bundle, "user:ana", "I live in New York City.", "2026-01-15") // pending: no belief yet
	require.NoError(t, store.KnownScope(ctx, ScopeQuery{Scope: "user:ana"}), "an episode makes a scope known")
	mustApply(t, store, extraction("user:ann", "2026-01-15", nil, fact(nyc, "location", "")))
	require.NoError(t, store.KnownScope(ctx, ScopeQuery{Scope: "user:ann"}), "so does a belief")

	u = unknown(ScopeQuery{Scope: "user:anna"})
	require.False(t, u.Empty)
	require.Equal(t, "user:ana", u.Nearest, "one edit from both: the first in order")
	require.EqualError(t, u, "no scope user:anna (did you mean user:ana?)")
	require.Equal(t, "user:ann", unknown(ScopeQuery{Scope: "user:annn"}).Nearest)
	require.EqualError(t, unknown(ScopeQuery{Scope: "customer:9"}), "no scope customer:9", "nothing near")
	require.Empty(t, unknown(ScopeQuery{Scope: "u:ana"}).Nearest, "a short name: one edit at most")
	require.Empty(t, unknown(ScopeQuery{Scope: "user:bob"}).Nearest, "three edits: another name, not a typo")

	// Only scopes the caller may see are suggested, or counted.
	tenant := func(scope string) bool { return strings.HasPrefix(scope, "acme/") }
	u = unknown(ScopeQuery{Scope: "user:anna", Sees: tenant})
	require.Empty(t, u.Nearest, "another tenant's scope is never suggested")
	require.True(t, u.Empty, "and the caller sees no scope at all")

	// Inheritance: a scope with nothing of its own reads its ancestors' defaults.
	mustApply(t, store, extraction("acme", "2026-01-15", nil, fact("Company plan is Pro", "plan", "")))
	require.NoError(t, store.KnownScope(ctx, ScopeQuery{Scope: "acme/team:x/user:1", Inherit: true}))
	u = unknown(ScopeQuery{Scope: "acme/team:x/user:1"})
	require.False(t, u.Empty)
	require.Empty(t, u.Nearest, "an ancestor is no typo")
	require.Error(t, store.KnownScope(ctx, ScopeQuery{Scope: "acne/user:1", Inherit: true}), "nor is a misspelt organisation")

	// A purge erases the scope with everything it held.
	_, err := store.Purge(ctx, Selection{Scope: "user:ann", All: true})
	require.NoError(t, err)
	require.Equal(t, "user:ana", unknown(ScopeQuery{Scope: "user:ann"}).Nearest)
}
