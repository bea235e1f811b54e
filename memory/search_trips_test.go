package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// TestRankedReadRoundTrips: a ranked read of a scope, with the beliefs it cannot rank,
// is one round trip, whether it reads halfvec copies or scans exactly; a scope with an
// index of its own is read through it, at the cost of one more. The answers are an
// exact scan's.
func TestRankedReadRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	const model, dim = "m-16", 16
	store := NewStore(schema.Pool, &Config{ExactSearchLimit: 100})
	require.NoError(t, store.EnsureEmbeddingModel(ctx, model, dim))
	rng := rand.New(rand.NewPCG(7, 9))
	var rows []dbtest.Row
	for i := range 300 {
		scope := "user:small"
		if i%2 == 0 {
			scope = "user:large"
		}
		rows = append(rows, dbtest.Row{Scope: scope, Statement: fmt.Sprintf("User read book %d", i),
			Attribute: fmt.Sprintf("book_%d", i), Vector: dbtest.Unit(rng, dim)})
	}
	dbtest.InsertBeliefs(t, schema.Pool, model, rows)
	res, err := store.IndexScope(ctx, "user:large", model)
	require.NoError(t, err)
	require.Equal(t, []string{"belief"}, res.Created)
	exact := NewStore(schema.Pool, &Config{FullScan: true})
	// A store looks a model's dimension up once.
	require.NoError(t, exact.EnsureEmbeddingModel(ctx, model, dim))

	for _, c := range []struct {
		scope string
		store *Store
		trips int
	}{
		{"user:small", store, 1}, {"user:small", exact, 1}, {"user:large", store, 2},
	} {
		vec := dbtest.Unit(rng, dim)
		counted := &tripConn{Conn: schema.Pool}
		got, err := c.store.On(counted).Nearest(ctx, c.scope, model, vec, 10)
		require.NoError(t, err)
		require.Equal(t, c.trips, counted.trips, c.scope)
		// No index answers a distance written without the cast the scopes' indexes are
		// built on.
		rows, err := schema.Pool.Query(ctx, `SELECT id FROM belief WHERE scope = $1 AND status = 'active'
			ORDER BY embedding <=> $2, id LIMIT 10`, c.scope, pgvector.NewVector(vec))
		require.NoError(t, err)
		want, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		require.Equal(t, want, ids(got), c.scope)
	}
}

// TestGuardedOutRead: a registration that comes between the lookup of a scope's own
// index and the guarded scan leaves the scan answering nothing; the read scans again,
// unguarded, rather than answer that the scope holds nothing. A scope that holds nothing
// pays that second round trip.
func TestGuardedOutRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	const model, dim = "m-8", 8
	store := NewStore(schema.Pool, nil)
	require.NoError(t, store.EnsureEmbeddingModel(ctx, model, dim))
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []dbtest.Row
	for i := range 20 {
		rows = append(rows, dbtest.Row{Scope: "user:a", Statement: fmt.Sprintf("User read book %d", i),
			Attribute: fmt.Sprintf("book_%d", i), Vector: dbtest.Unit(rng, dim)})
	}
	dbtest.InsertBeliefs(t, schema.Pool, model, rows)
	vec := dbtest.Unit(rng, dim)
	want, err := store.Nearest(ctx, "user:a", model, vec, 5)
	require.NoError(t, err)
	require.Len(t, want, 5)

	// The lookup saw no index; the registration came before the scan.
	_, err = schema.Pool.Exec(ctx, `INSERT INTO scope_vector_index (scope, tbl, model, name) VALUES ('user:a', 'belief', $1, 'late')`, model)
	require.NoError(t, err)
	r, err := newNearestRead(ctx, store, nearestQuery{table: searchBeliefs, scope: "user:a", where: currentView,
		args: []any{"user:a"}, model: model, vec: vec, k: 5}, scoped(candidateColumns, currentView), scanBelief)
	require.NoError(t, err)
	b := &pgx.Batch{}
	r.queue(b)
	require.NoError(t, schema.Pool.SendBatch(ctx, b).Close())
	require.True(t, r.indexed)
	require.Empty(t, r.rows, "the guard held the scan")
	r.indexed = false
	got, err := r.finish(ctx)
	require.NoError(t, err)
	require.Equal(t, ids(want), ids(got))

	counted := &tripConn{Conn: schema.Pool}
	none, err := store.On(counted).Nearest(ctx, "user:none", model, vec, 5)
	require.NoError(t, err)
	require.Empty(t, none)
	require.Equal(t, 2, counted.trips)
}
