package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

const (
	crowdModel = "crowd-64"
	crowdDim   = 64
	victim     = "user:victim"
)

// crowdBundle is a database where 40,000 beliefs and 20,000 revision events of 2,000
// other scopes lie nearer to the query than anything of the victim scope's, as every
// other user's "User lives in ..." lies nearer to "where does the user live?".
type crowdBundle struct {
	schema *dbtest.Schema
	store  *memory.Store
	query  []float32
	// beliefs and events are the victim's, with their vectors, in id order.
	beliefIDs, eventIDs   []int64
	beliefVecs, eventVecs [][]float32
	// active marks the victim's active beliefs; the others are superseded.
	active []bool
}

func setupCrowd(t *testing.T, victimBeliefs int) *crowdBundle {
	t.Helper()
	ctx := context.Background()
	schema := dbtest.New(t)
	store := memory.NewStore(schema.Pool, nil)
	require.NoError(t, store.EnsureEmbeddingModel(ctx, crowdModel, crowdDim))
	rng := rand.New(rand.NewPCG(7, uint64(victimBeliefs)))
	b := &crowdBundle{schema: schema, store: store, query: dbtest.Unit(rng, crowdDim)}

	var crowd []dbtest.Row
	for i := range 40_000 {
		crowd = append(crowd, dbtest.Row{Scope: fmt.Sprintf("user:%d", i%2000), Statement: fmt.Sprintf("User lives in city %d", i),
			Attribute: "home_city", Vector: dbtest.Near(rng, b.query, 0.95+0.05*rng.Float64())})
	}
	var rows []dbtest.Row
	for i := range victimBeliefs {
		r := dbtest.Row{Scope: victim, Statement: fmt.Sprintf("User likes hobby %d", i), Attribute: fmt.Sprintf("hobby_%d", i),
			Vector: dbtest.Near(rng, b.query, 0.9*rng.Float64())}
		if i%5 == 4 {
			r.Status = "superseded"
		}
		rows = append(rows, r)
		b.beliefVecs = append(b.beliefVecs, r.Vector)
		b.active = append(b.active, r.Status == "")
	}
	// Crowd first, then the victim: the victim's rows are the newest, as a user who
	// joins last.
	dbtest.InsertBeliefs(t, schema.Pool, crowdModel, crowd)
	b.beliefIDs = dbtest.InsertBeliefs(t, schema.Pool, crowdModel, rows)

	var crowdEvents, events []dbtest.Row
	for i := range 20_000 {
		crowdEvents = append(crowdEvents, dbtest.Row{Scope: fmt.Sprintf("user:%d", i%2000),
			Statement: fmt.Sprintf("User lived in city %d", i), Vector: dbtest.Near(rng, b.query, 0.95+0.05*rng.Float64())})
	}
	for i := range 300 {
		r := dbtest.Row{Scope: victim, Statement: fmt.Sprintf("User liked hobby %d", i), Vector: dbtest.Near(rng, b.query, 0.9*rng.Float64())}
		events = append(events, r)
		b.eventVecs = append(b.eventVecs, r.Vector)
	}
	dbtest.InsertEvents(t, schema.Pool, crowdModel, crowdEvents)
	b.eventIDs = dbtest.InsertEvents(t, schema.Pool, crowdModel, events)
	_, err := schema.Pool.Exec(ctx, "ANALYZE belief; ANALYZE revision_event")
	require.NoError(t, err)
	return b
}

// exact is the reference answer: the ids of the k vectors of vecs nearest to q, among
// those keep accepts.
func exact(q []float32, ids []int64, vecs [][]float32, keep func(i int) bool, k int) []int64 {
	var kid []int64
	var kv [][]float32
	for i := range ids {
		if keep == nil || keep(i) {
			kid, kv = append(kid, ids[i]), append(kv, vecs[i])
		}
	}
	var out []int64
	for _, i := range dbtest.ExactNearest(q, kv, k) {
		out = append(out, kid[i])
	}
	return out
}

func beliefIDs(bs []memory.Belief) []int64 {
	out := make([]int64, len(bs))
	for i, b := range bs {
		out[i] = b.ID
	}
	return out
}

// TestCrowdedScopeSearch: every nearest-neighbour read of a scope answers the scope's own
// k nearest, exactly, while tens of thousands of other scopes' rows lie nearer to the
// query, and answers the same when repeated on one pooled connection (where PostgreSQL
// switches from custom to generic plans after five runs of a prepared statement).
func TestCrowdedScopeSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCrowd(t, 1201)
	const k = 10
	wantActive := exact(b.query, b.beliefIDs, b.beliefVecs, func(i int) bool { return b.active[i] }, k)
	wantAll := exact(b.query, b.beliefIDs, b.beliefVecs, nil, k)

	conn, err := b.schema.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	store := b.store.On(conn)

	t.Run("Nearest", func(t *testing.T) {
		for range 10 {
			got, err := store.Nearest(ctx, victim, crowdModel, b.query, k)
			require.NoError(t, err)
			require.Equal(t, wantActive, beliefIDs(got))
		}
	})
	t.Run("RecallCurrent", func(t *testing.T) {
		for range 10 {
			rec, err := store.Recall(ctx, memory.RecallQuery{Scope: victim, Text: "Where does the user live?",
				Vector: b.query, EmbedModel: crowdModel, K: k})
			require.NoError(t, err)
			require.Equal(t, wantActive, beliefIDs(rec.Beliefs))
		}
	})
	t.Run("RecallAsOf", func(t *testing.T) {
		at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		for range 10 {
			rec, err := store.Recall(ctx, memory.RecallQuery{Scope: victim, Vector: b.query, EmbedModel: crowdModel, K: k, AsOf: &at})
			require.NoError(t, err)
			require.Equal(t, wantAll, beliefIDs(rec.Beliefs))
		}
	})
	t.Run("RecallHistory", func(t *testing.T) {
		for range 10 {
			rec, err := store.Recall(ctx, memory.RecallQuery{Scope: victim, Vector: b.query, EmbedModel: crowdModel, K: k, History: true})
			require.NoError(t, err)
			// The rows have no links: each chain is its own belief.
			require.Equal(t, wantAll, beliefIDs(rec.Beliefs))
		}
	})
	t.Run("NearestEvents", func(t *testing.T) {
		want := exact(b.query, b.eventIDs, b.eventVecs, nil, k)
		for range 10 {
			got, err := store.NearestEvents(ctx, victim, crowdModel, b.query, k)
			require.NoError(t, err)
			ids := make([]int64, len(got))
			for i, e := range got {
				ids[i] = e.ID
				require.Equal(t, victim, e.Scope)
			}
			require.Equal(t, want, ids)
		}
	})
	t.Run("Neighbors", func(t *testing.T) {
		// The seeds' nearest beliefs of other scopes are the crowd; their scope's own
		// neighbours are what must come back.
		seeds := []int64{b.beliefIDs[0], b.beliefIDs[1], b.beliefIDs[2]}
		for range 10 {
			got, err := store.Neighbors(ctx, memory.NeighborQuery{Scope: victim, Model: crowdModel, Seeds: seeds, K: 5, MaxDistance: 2})
			require.NoError(t, err)
			bySeed := map[int64][]int64{}
			for _, n := range got {
				bySeed[n.Seed] = append(bySeed[n.Seed], n.ID)
			}
			for i, seed := range seeds {
				want := exact(b.beliefVecs[i], b.beliefIDs, b.beliefVecs, func(j int) bool { return b.active[j] && j != i }, 5)
				require.Equal(t, want, bySeed[seed], "seed %d", seed)
			}
		}
	})
}

// TestLargeScopeSearch: a scope above the exact limit gets an HNSW index of its own,
// which a crowd of other scopes cannot blind: recall@10 of at least 0.98 against the
// exact answer, and the index goes when the scope shrinks under half the limit.
func TestLargeScopeSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCrowd(t, 3000)
	store := memory.NewStore(b.schema.Pool, &memory.Config{ExactSearchLimit: 1000})

	res, err := store.IndexScope(ctx, victim, crowdModel)
	require.NoError(t, err)
	require.Equal(t, []string{"belief"}, res.Created, "300 events stay under the limit")
	require.Equal(t, 3000, res.Rows["belief"])
	scopes, err := store.IndexedScopes(ctx, crowdModel)
	require.NoError(t, err)
	require.Equal(t, []string{victim}, scopes)
	// Done once: a second call finds the index there.
	res, err = store.IndexScope(ctx, victim, crowdModel)
	require.NoError(t, err)
	require.Empty(t, res.Created)

	rng := rand.New(rand.NewPCG(1, 2))
	const k, queries = 10, 50
	var recall float64
	for range queries {
		// Queries near the scope's own beliefs, and near the crowd.
		q := dbtest.Near(rng, b.beliefVecs[rng.IntN(len(b.beliefVecs))], 0.8)
		want := exact(q, b.beliefIDs, b.beliefVecs, func(i int) bool { return b.active[i] }, k)
		got, err := store.Nearest(ctx, victim, crowdModel, q, k)
		require.NoError(t, err)
		require.Len(t, got, k)
		for _, g := range got {
			require.Equal(t, victim, g.Scope)
		}
		recall += dbtest.Recall(beliefIDs(got), want)
	}
	recall /= queries
	t.Logf("recall@%d through the scope's own index: %.4f", k, recall)
	require.GreaterOrEqual(t, recall, 0.98)

	// The crowd's query: the victim's beliefs are all far, the index must still find k.
	got, err := store.Nearest(ctx, victim, crowdModel, b.query, k)
	require.NoError(t, err)
	require.GreaterOrEqual(t, dbtest.Recall(beliefIDs(got),
		exact(b.query, b.beliefIDs, b.beliefVecs, func(i int) bool { return b.active[i] }, k)), 0.9)

	// The scope shrinks under half the limit: back to exact scans, the index dropped.
	_, err = b.schema.Pool.Exec(ctx, "DELETE FROM belief WHERE scope = $1 AND id > $2", victim, b.beliefIDs[400])
	require.NoError(t, err)
	res, err = store.IndexScope(ctx, victim, crowdModel)
	require.NoError(t, err)
	require.Equal(t, []string{"belief"}, res.Dropped)
	scopes, err = store.IndexedScopes(ctx, crowdModel)
	require.NoError(t, err)
	require.Empty(t, scopes)
	got, err = store.Nearest(ctx, victim, crowdModel, b.query, k)
	require.NoError(t, err)
	want := exact(b.query, b.beliefIDs[:401], b.beliefVecs[:401], func(i int) bool { return b.active[i] }, k)
	require.Equal(t, want, beliefIDs(got))
}

// TestPurgeDropsScopeIndex: erasing a scope removes its own index, whose definition
// names the scope.
func TestPurgeDropsScopeIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	store := memory.NewStore(schema.Pool, &memory.Config{ExactSearchLimit: 100})
	require.NoError(t, store.EnsureEmbeddingModel(ctx, crowdModel, crowdDim))
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []dbtest.Row
	for i := range 150 {
		rows = append(rows, dbtest.Row{Scope: "user:gone", Statement: fmt.Sprintf("User read book %d", i), Vector: dbtest.Unit(rng, crowdDim)})
	}
	dbtest.InsertBeliefs(t, schema.Pool, crowdModel, rows)
	res, err := store.IndexScope(ctx, "user:gone", crowdModel)
	require.NoError(t, err)
	require.Equal(t, []string{"belief"}, res.Created)

	_, err = store.Purge(ctx, memory.Selection{Scope: "user:gone", All: true})
	require.NoError(t, err)
	scopes, err := store.IndexedScopes(ctx, crowdModel)
	require.NoError(t, err)
	require.Empty(t, scopes)
	var named int
	require.NoError(t, schema.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND pg_get_expr(i.indpred, i.indrelid) LIKE '%user:gone%'`, schema.Name).Scan(&named))
	require.Zero(t, named, "no index definition names the erased scope")
}
