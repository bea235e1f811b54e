package memory

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNeighborsAcrossChunks checks that seeds split into chunks, probed in parallel on
// several connections, find what each seed finds alone, in seed order; and that a store
// on one connection (On) probes its chunks one after the other to the same result.
func TestNeighborsAcrossChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	require.NoError(t, store.EnsureEmbeddingModel(ctx, "nb3", 3))

	// Pairs of nearly equal vectors spread over the sphere: more than two chunks of
	// seeds.
	const pairs = neighborChunk + 50
	var statements, vectors []string
	for i := range pairs {
		// A Fibonacci sphere: directions evenly apart, pair members 0.005 rad apart.
		z := 1 - (2*float64(i)+1)/pairs
		r, phi := math.Sqrt(1-z*z), float64(i)*math.Pi*(3-math.Sqrt(5))
		for _, d := range []float64{0, 0.005} {
			statements = append(statements, fmt.Sprintf("belief %d%+v", i, d))
			vectors = append(vectors, fmt.Sprintf("[%g,%g,%g]", r*math.Cos(phi+d), r*math.Sin(phi+d), z))
		}
	}
	var seeds []int64
	err := bundle.schema.Pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin,
				valid_from, recorded_at, last_seen_at, embedding, embed_model)
			SELECT 's', 'user', 'a', 'other', st, 0.9, 'user_stated', now(), now(), now(), v::vector, 'nb3'
			FROM unnest($1::text[], $2::text[]) AS u(st, v)
			RETURNING id)
		SELECT array_agg(id ORDER BY id DESC) FROM ins`, statements, vectors).Scan(&seeds)
	require.NoError(t, err)

	q := NeighborQuery{Scope: "s", Model: "nb3", Seeds: seeds, K: 3, MaxDistance: 1e-4, SameSubject: true}
	var alone []Neighbor
	for _, seed := range slices.Sorted(slices.Values(seeds)) {
		one := q
		one.Seeds = []int64{seed}
		ns, err := store.Neighbors(ctx, one)
		require.NoError(t, err)
		require.Len(t, ns, 1, "seed %d: its pair member only", seed)
		alone = append(alone, ns...)
	}

	ns, err := store.Neighbors(ctx, q)
	require.NoError(t, err)
	require.Equal(t, alone, ns, "seeds given in descending order come back ordered by seed")

	conn, err := bundle.schema.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	ns, err = store.On(conn).Neighbors(ctx, q)
	require.NoError(t, err)
	require.Equal(t, alone, ns)
}
