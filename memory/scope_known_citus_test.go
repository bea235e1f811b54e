//go:build citus

package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// TestCitusKnownScope: the check of a known scope, its own or inherited, is a router
// query (on a pool where a multi-shard query fails); the suggestion for an unknown one
// lists the scopes of every shard.
func TestCitusKnownScope(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	schema := dbtest.New(t)
	store := NewStore(schema.Pool, nil)
	for _, scope := range []string{"acme", "user:ana", "user:bob", "user:carla", "user:dave", "user:eve", "user:fay"} {
		mustApply(t, store, extraction(scope, "2026-01-15", nil, fact(nyc, "location", "")))
	}
	router := NewStore(schema.RouterPool(t), nil)
	require.NoError(t, router.KnownScope(ctx, ScopeQuery{Scope: "user:ana"}))
	require.NoError(t, router.KnownScope(ctx, ScopeQuery{Scope: "acme/team:x/user:1", Inherit: true}), "one router query per ancestor")

	for typo, want := range map[string]string{"user:anna": "user:ana", "user:bobb": "user:bob", "user:karla": "user:carla", "user:dav": "user:dave", "user:evee": "user:eve", "user:fey": "user:fay"} {
		require.EqualError(t, store.KnownScope(ctx, ScopeQuery{Scope: typo}), "no scope "+typo+" (did you mean "+want+"?)")
	}
}
