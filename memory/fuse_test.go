package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// fusedIDs is the ids of a fused candidate read, each checked to say where it ranked.
func fusedIDs(t *testing.T, s *Store, q CandidatesQuery) []int64 {
	t.Helper()
	bs, err := s.Candidates(context.Background(), q)
	require.NoError(t, err)
	ids := make([]int64, len(bs))
	for i, b := range bs {
		require.NotNil(t, b.Match, "every belief of a fused read says where it ranked")
		require.True(t, b.Match.VectorRank > 0 || b.Match.WordsRank > 0 || b.Match.EntityRank > 0)
		ids[i] = b.ID
	}
	return ids
}

// TestFusedReadKeepsWhatCanRank: the fused statement leaves unread the beliefs only the
// text found that cannot be among the k kept; what it keeps is what a read of every
// belief finds first. A read of k = 250, more than the scope holds, leaves nothing unread
// and ranks every candidate a read of 10 has (its vector ranking is all of the scope,
// its text rankings the same 10), so its first 10 are the answer of 10.
func TestFusedReadKeepsWhatCanRank(t *testing.T) {
	t.Parallel()
	b := setupCommon(t)
	query := dbtest.Unit(b.rng, commonDim)
	var rows []dbtest.Row
	for i := range 200 {
		statement := fmt.Sprintf("User keeps note %d", i)
		if i%5 == 0 {
			statement = fmt.Sprintf("User saw a zebra on trip %d", i) // 40 beliefs: a rare word
		}
		rows = append(rows, dbtest.Row{Scope: b.scope, Statement: statement, Attribute: "note",
			Vector: dbtest.Near(b.rng, query, b.rng.Float64())})
	}
	dbtest.InsertBeliefs(t, b.store.db, commonModel, rows)

	for range 20 {
		vec := dbtest.Near(b.rng, query, 0.5+0.5*b.rng.Float64())
		q := CandidatesQuery{Scope: b.scope, Text: "the zebra", Model: commonModel, Vector: vec, K: 10}
		got := fusedIDs(t, b.store, q)
		q.K = 250
		all := fusedIDs(t, b.store, q)
		require.Len(t, got, 10)
		require.Len(t, all, 200)
		require.Equal(t, all[:10], got)
	}
}

// TestFusedReadOfIndexedScope: a scope with an index of its own reads it after the
// batch; the text's rankings, read in the batch's statement, fuse with it.
func TestFusedReadOfIndexedScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	s := NewStore(schema.Pool, &Config{ExactSearchLimit: 50})
	require.NoError(t, s.EnsureEmbeddingModel(ctx, commonModel, commonDim))
	rng := rand.New(rand.NewPCG(5, 6))
	query := dbtest.Unit(rng, commonDim)
	var rows []dbtest.Row
	for i := range 80 {
		rows = append(rows, dbtest.Row{Scope: "user:indexed", Statement: fmt.Sprintf("User owns item %d", i), Attribute: "item",
			Vector: dbtest.Near(rng, query, 0.4*rng.Float64())})
	}
	// Far from the question by its vector; its code is the question's, which puts it
	// above the others (0.5 for its words, under 0.4 for their vectors).
	rows = append(rows, dbtest.Row{Scope: "user:indexed", Statement: "User's order KX-5521 is a desk", Attribute: "order",
		Vector: dbtest.Near(rng, query, 0)})
	ids := dbtest.InsertBeliefs(t, schema.Pool, commonModel, rows)
	res, err := s.IndexScope(ctx, "user:indexed", commonModel)
	require.NoError(t, err)
	require.Equal(t, []string{"belief"}, res.Created)

	bs, err := s.Candidates(ctx, CandidatesQuery{Scope: "user:indexed", Text: "Cancel order KX-5521", Model: commonModel,
		Vector: query, K: 8})
	require.NoError(t, err)
	require.Len(t, bs, 8)
	require.Equal(t, ids[len(ids)-1], bs[0].ID, "the named order first")
	require.Zero(t, bs[0].Match.VectorRank)
	require.Equal(t, 1, bs[0].Match.WordsRank)
	for i, b := range bs[1:] {
		require.Equal(t, i+1, b.Match.VectorRank, "then the index's nearest, in order")
	}
}
