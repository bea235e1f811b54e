package consolidate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

// TestPassIndexesLargeScope: a pass over a scope grown past the exact limit gives it an
// index of its own before searching its neighbours, and the pass still finds them.
func TestPassIndexesLargeScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := passOverBigScope(t, &memory.Config{ExactSearchLimit: 50}, 80)
	scopes, err := store.IndexedScopes(ctx, benchModel)
	require.NoError(t, err)
	require.Equal(t, []string{"user:big"}, scopes)
}

// TestPassCountsCommonWords: a pass counts the words most of a grown scope's beliefs
// hold, which recall's words ranking then leaves out (memory.CountCommonWords).
func TestPassCountsCommonWords(t *testing.T) {
	t.Parallel()
	store := passOverBigScope(t, nil, memory.MaxTermBeliefs+1)
	res, err := store.CountCommonWords(context.Background(), "user:big")
	require.NoError(t, err)
	require.Equal(t, memory.CommonWordsResult{Beliefs: memory.MaxTermBeliefs + 1}, res, "counted by the pass: not due again")
}

// passOverBigScope stores n beliefs in scope user:big, runs a consolidation pass over it
// with a store of cfg and no model call, and returns the store.
func passOverBigScope(t *testing.T, cfg *memory.Config, n int) *memory.Store {
	t.Helper()
	ctx := context.Background()
	schema := dbtest.New(t)
	store := memory.NewStore(schema.Pool, cfg)
	require.NoError(t, store.EnsureEmbeddingModel(ctx, benchModel, benchDim))
	rng := rand.New(rand.NewPCG(5, uint64(n)))
	rows := make([]dbtest.Row, n)
	for i := range rows {
		rows[i] = dbtest.Row{Scope: "user:big", Statement: fmt.Sprintf("User owns item %d", i), Vector: dbtest.Unit(rng, benchDim)}
	}
	dbtest.InsertBeliefs(t, schema.Pool, benchModel, rows)
	w, err := NewWorker(Config{Store: store, Chat: noChat{}, EmbedModel: benchModel, Settle: -1})
	require.NoError(t, err)
	_, err = w.RunScope(ctx, "user:big")
	require.NoError(t, err)
	return store
}
