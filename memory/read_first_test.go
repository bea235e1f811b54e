package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadForWriter: an extraction's reads before its model call take one round trip
// and read what each read alone reads, the snapshot before the current beliefs.
func TestReadForWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, bundle := setup(t)
	const model = "m"
	require.NoError(t, s.EnsureEmbeddingModel(ctx, model, 3))
	embedded := func(b *Batch) *Batch { b.EmbedModel = model; return b }
	paris := mustApply(t, s, embedded(extraction("u", "2026-01-02", nil,
		withVec("User lives in Paris", []float32{1, 0, 0})))).Facts[0].BeliefID
	moved := resolves(withVec("User lives in Miami", []float32{0.9, 0.1, 0}), 0, ActionSupersede, ReasonTemporal)
	moved.EventEmbedding = []float32{0, 0, 1}
	mustApply(t, s, embedded(extraction("u", "2026-03-01", []int64{paris}, moved)))
	mustApply(t, s, extraction("u", "2026-03-02", nil, fact("User plays the cello", "instrument", "")))
	mustApply(t, s, extraction("v", "2026-03-02", nil, fact("User speaks Danish", "language", "")))
	first := insertEpisode(t, bundle, "u", "I moved again.", "2026-04-01")
	insertEpisode(t, bundle, "u", "And again.", "2026-04-02")
	_, err := s.SetPolicy(ctx, Policy{ScopePrefix: "u", Instructions: "Be brief."})
	require.NoError(t, err)

	read := func(t *testing.T, q WriterReadQuery) *WriterRead {
		t.Helper()
		counted := &tripConn{Conn: bundle.schema.Pool}
		r, err := s.On(counted).ReadForWriter(ctx, q)
		require.NoError(t, err)
		require.Equal(t, 1, counted.trips)
		return r
	}

	r := read(t, WriterReadQuery{Scope: "u", NextEpisode: true, CurrentLimit: 10, Model: model,
		ExampleScopes: []string{"u", "v"}, UnembeddedLimit: 10})
	next, err := s.NextPendingEpisode(ctx, "u")
	require.NoError(t, err)
	require.Equal(t, next, r.Episode)
	require.Equal(t, first, r.Episode.ID, "the oldest pending episode")
	policy, err := s.PolicyFor(ctx, "u")
	require.NoError(t, err)
	require.Equal(t, policy, r.Policy)
	require.Equal(t, "Be brief.", r.Policy.Instructions)
	seen, err := s.Snapshot(ctx, "u")
	require.NoError(t, err)
	require.Equal(t, seen, r.Seen)
	current, err := s.CurrentUpTo(ctx, "u", 10)
	require.NoError(t, err)
	require.Equal(t, current, r.Current)
	require.ElementsMatch(t, []string{"User lives in Miami", "User plays the cello"}, statementsOf(r.Current))
	require.True(t, r.ExamplesAvailable, "the move is an example")
	unembedded, err := s.Unembedded(ctx, "u", model, 10)
	require.NoError(t, err)
	require.Equal(t, unembedded, r.Unembedded)
	require.Equal(t, []string{"User plays the cello"}, texts(r.Unembedded))

	// A scope with nothing pending, no policy and no example; what is not asked is not
	// read.
	r = read(t, WriterReadQuery{Scope: "v", NextEpisode: true, CurrentLimit: 1, Model: model, ExampleScopes: []string{"v"}})
	require.Nil(t, r.Episode)
	require.Nil(t, r.Policy)
	require.Equal(t, []string{"User speaks Danish"}, statementsOf(r.Current))
	require.False(t, r.ExamplesAvailable)
	require.Empty(t, r.Unembedded, "no limit, none read")
	r = read(t, WriterReadQuery{Scope: "u", CurrentLimit: 1})
	require.Nil(t, r.Episode, "not asked")
	require.Len(t, r.Current, 1)
	require.False(t, r.ExamplesAvailable, "no model, no examples looked for")
}

// TestReadForQuestion: a question's reads before its embedding call take one round trip
// and read what each read alone reads.
func TestReadForQuestion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, bundle := setup(t)
	mustApply(t, s, extraction("u", "2026-03-02", nil, fact("User plays the cello", "instrument", "")))
	_, err := s.SetPolicy(ctx, Policy{ScopePrefix: "u", Instructions: "Be brief."})
	require.NoError(t, err)
	for _, c := range []struct {
		scope string
		limit int
	}{{"u", 10}, {"u", 0}, {"v", 10}} {
		counted := &tripConn{Conn: bundle.schema.Pool}
		policy, pending, err := s.On(counted).ReadForQuestion(ctx, c.scope, "m", c.limit)
		require.NoError(t, err)
		require.Equal(t, 1, counted.trips)
		want, err := s.PolicyFor(ctx, c.scope)
		require.NoError(t, err)
		require.Equal(t, want, policy)
		if c.limit == 0 {
			require.Empty(t, pending, "none asked")
			continue
		}
		unembedded, err := s.Unembedded(ctx, c.scope, "m", c.limit)
		require.NoError(t, err)
		require.Equal(t, unembedded, pending)
		if c.scope == "u" {
			require.Equal(t, []string{"User plays the cello"}, texts(pending))
			require.Equal(t, "Be brief.", policy.Instructions)
		}
	}
}
