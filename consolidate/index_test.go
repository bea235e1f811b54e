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
	schema := dbtest.New(t)
	store := memory.NewStore(schema.Pool, &memory.Config{ExactSearchLimit: 50})
	require.NoError(t, store.EnsureEmbeddingModel(ctx, benchModel, benchDim))
	rng := rand.New(rand.NewPCG(5, 6))
	var rows []dbtest.Row
	for i := range 80 {
		rows = append(rows, dbtest.Row{Scope: "user:big", Statement: fmt.Sprintf("User owns item %d", i), Vector: dbtest.Unit(rng, benchDim)})
	}
	dbtest.InsertBeliefs(t, schema.Pool, benchModel, rows)
	w, err := NewWorker(Config{Store: store, Chat: noChat{}, EmbedModel: benchModel, Settle: -1})
	require.NoError(t, err)

	_, err = w.RunScope(ctx, "user:big")
	require.NoError(t, err)
	scopes, err := store.IndexedScopes(ctx, benchModel)
	require.NoError(t, err)
	require.Equal(t, []string{"user:big"}, scopes)
}

// TestPassCountsCommonWords: a pass counts the words most of a grown scope's beliefs
// hold, which recall's words ranking then leaves out (memory.CountCommonWords).
func TestPassCountsCommonWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	store := memory.NewStore(schema.Pool, nil)
	require.NoError(t, store.EnsureEmbeddingModel(ctx, benchModel, benchDim))
	rng := rand.New(rand.NewPCG(7, 8))
	var rows []dbtest.Row
	for i := range memory.MaxTermBeliefs + 1 {
		rows = append(rows, dbtest.Row{Scope: "user:big", Statement: fmt.Sprintf("User owns item %d", i), Vector: dbtest.Unit(rng, benchDim)})
	}
	dbtest.InsertBeliefs(t, schema.Pool, benchModel, rows)
	w, err := NewWorker(Config{Store: store, Chat: noChat{}, EmbedModel: benchModel, Settle: -1})
	require.NoError(t, err)

	_, err = w.RunScope(ctx, "user:big")
	require.NoError(t, err)
	res, err := store.CountCommonWords(ctx, "user:big")
	require.NoError(t, err)
	require.Equal(t, memory.CommonWordsResult{Beliefs: memory.MaxTermBeliefs + 1}, res, "counted by the pass: not due again")
}
