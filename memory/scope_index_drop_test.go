package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

const (
	indexModel = "index-test-model"
	indexDim   = 8
)

// indexedScope gives scope 150 beliefs, over the store's exact limit of 100, and its own
// index, whose name it returns.
func indexedScope(t *testing.T, store *Store, bundle *testBundle, scope string) string {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, store.EnsureEmbeddingModel(ctx, indexModel, indexDim))
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []dbtest.Row
	for i := range 150 {
		rows = append(rows, dbtest.Row{Scope: scope, Statement: fmt.Sprintf("User read book %d", i), Vector: dbtest.Unit(rng, indexDim)})
	}
	dbtest.InsertBeliefs(t, bundle.schema.Pool, indexModel, rows)
	res, err := store.IndexScope(ctx, scope, indexModel)
	require.NoError(t, err)
	require.Equal(t, []string{"belief"}, res.Created)
	var name string
	require.NoError(t, bundle.schema.Pool.QueryRow(ctx, "SELECT name FROM scope_vector_index WHERE scope = $1", scope).Scan(&name))
	return name
}

// indexesNaming counts the index definitions of the test's schema that name text.
func indexesNaming(t *testing.T, bundle *testBundle, text string) int {
	t.Helper()
	var n int
	// The schema's indexes first: another test's, dropped meanwhile, has no definition.
	require.NoError(t, bundle.schema.Pool.QueryRow(context.Background(), `WITH mine AS MATERIALIZED (
			SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relkind = 'i')
		SELECT count(*) FROM mine WHERE relname LIKE '%' || $2 || '%' OR pg_get_indexdef(oid) LIKE '%' || $2 || '%'`,
		bundle.schema.Name, text).Scan(&n))
	return n
}

// An erased scope's index that the purge cannot drop at once (another index build holds
// the table, or the caller went) stays a drop to do, which names no scope, and the
// worker's run drops it: no later purge is needed, nor could one find it.
func TestPurgeLeavesAnIndexDropToDo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	store.exactLimit, store.indexDropWait = 100, 200*time.Millisecond
	const scope = "acme/user:zeb"
	name := indexedScope(t, store, bundle, scope)
	require.Equal(t, 1, indexesNaming(t, bundle, scope))

	// An index build on belief, as another scope's would: DROP INDEX CONCURRENTLY waits.
	build, err := bundle.schema.Pool.Begin(ctx)
	require.NoError(t, err)
	_, err = build.Exec(ctx, "LOCK TABLE belief IN SHARE UPDATE EXCLUSIVE MODE")
	require.NoError(t, err)
	purged, err := store.Purge(ctx, Selection{Scope: scope, All: true})
	require.NoError(t, err)
	require.True(t, purged.IndexesLeft, "the answer says the index is left to the worker")
	require.EqualValues(t, 1, purged.Counts["scope_vector_index"])
	require.Empty(t, mentions(t, bundle, scope), "no row names the scope")
	require.Equal(t, 1, count(t, bundle, "scope_index_drop"))
	require.NoError(t, build.Rollback(ctx))

	drops, err := store.DropErasedIndexes(ctx)
	require.NoError(t, err)
	require.Equal(t, IndexDrops{Dropped: 1}, drops)
	require.Zero(t, indexesNaming(t, bundle, scope), "no index names the erased scope")
	require.Zero(t, indexesNaming(t, bundle, name))
	require.Zero(t, count(t, bundle, "scope_index_drop"))

	// Names are random: the same scope indexed again gets another.
	again := indexedScope(t, store, bundle, scope)
	require.NotEqual(t, name, again)
	require.NotContains(t, again, "zeb")
}

// A build whose scope a purge erased while it ran registers nothing and drops its index:
// the registration waits for the scope's lock and finds the scope gone.
func TestBuildAfterPurgeRegistersNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	store.exactLimit = 100
	const scope = "acme/user:amy"
	indexedScope(t, store, bundle, scope)
	_, err := store.Purge(ctx, Selection{Scope: scope, All: true})
	require.NoError(t, err)
	require.Zero(t, indexesNaming(t, bundle, scope))

	// The build counted the rows before the purge and builds after it.
	conn, err := store.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	built, err := store.buildScopeIndex(ctx, conn, searchBeliefs, scope, indexModel, indexDim)
	require.NoError(t, err)
	require.False(t, built)
	require.Zero(t, indexesNaming(t, bundle, scope), "its index is dropped")
	require.Empty(t, mentions(t, bundle, scope), "nor registered")
	require.Zero(t, count(t, bundle, "scope_index_drop"), "nor left to drop")
}

// A drop to do whose build is in progress (its name's lock held) is left to the build.
func TestDropErasedIndexesLeavesABuildInProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	conn, err := store.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	require.NoError(t, trySessionLock(ctx, conn, indexLockKey("belief_scope_0123456789abcdef_idx")))
	require.NoError(t, recordIndexDrops(ctx, conn, []string{"belief_scope_0123456789abcdef_idx"}))
	drops, err := store.DropErasedIndexes(ctx)
	require.NoError(t, err)
	require.Equal(t, IndexDrops{Left: 1}, drops)
	require.Equal(t, 1, count(t, bundle, "scope_index_drop"))
}
