package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScopeOf(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	belief := mustApply(t, store, extraction("tenant:a/u", "2026-01-01", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
	episode := insertEpisode(t, bundle, "tenant:a/u", "I live in New York.", "2026-01-01")
	for what, id := range map[string]int64{OfBelief: belief, OfEpisode: episode} {
		scope, err := store.ScopeOf(ctx, what, id)
		require.NoError(t, err)
		require.Equal(t, "tenant:a/u", scope)
		_, err = store.ScopeOf(ctx, what, id+1000)
		require.ErrorIs(t, err, ErrNotFound)
	}
	_, err := store.ScopeOf(ctx, "api_key", 1)
	require.Error(t, err, "only things with a scope")
	require.NotErrorIs(t, err, ErrNotFound)
}
