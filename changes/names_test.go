package changes_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// A scope that only the feed still names (partial purges took the rest) is erased whole
// by a purge of the scope, and of its subtree: the feed names it.
func TestScopeNamedOnlyByTheFeedIsErasable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSetup(t)
	for _, scope := range []string{"acme/user:1", "acme/user:2"} {
		s.accept(t, scope, "User likes tea")
		_, err := s.store.Purge(ctx, memory.Selection{Scope: scope, Match: "tea"})
		require.NoError(t, err)
		// What memory keeps of an emptied scope, taken away: only the feed names it.
		_, err = s.schema.Pool.Exec(ctx, "DELETE FROM entity_alias WHERE scope = $1", scope)
		require.NoError(t, err)
		_, err = s.schema.Pool.Exec(ctx, "DELETE FROM entity WHERE scope = $1", scope)
		require.NoError(t, err)
		require.Equal(t, []string{"change", "change_head"}, slices.Sorted(maps.Keys(s.schema.Mentions(t, scope))))
	}

	_, err := s.store.Purge(ctx, memory.Selection{Scope: "acme/user:1", All: true})
	require.NoError(t, err)
	require.Empty(t, s.schema.Mentions(t, "acme/user:1"))

	scopes, err := s.store.ErasableScopes(ctx, "acme/")
	require.NoError(t, err)
	require.Equal(t, []string{"acme/user:2"}, scopes)
	out, err := s.store.PurgeSubtree(ctx, "acme/")
	require.NoError(t, err)
	require.Len(t, out.Scopes, 1)
	require.Empty(t, s.schema.Mentions(t, "acme/"))
}
