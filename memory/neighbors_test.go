package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// nbFact is fact with a vector of the 3-dimensional test model "nb3".
func nbFact(statement, subject string, vec ...float32) Fact {
	f := fact(statement, "a", "")
	f.Subject, f.Embedding = subject, vec
	return f
}

func TestChangedSince(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)

	// Three batches at three known times; the second holds two beliefs changed at the
	// same instant and one without a vector.
	t1, t2, t3 := day("2026-06-01"), day("2026-06-02"), day("2026-06-03")
	bundle.clock.Set(t1)
	a := mustApply(t, store, &Batch{Scope: "s", Origin: RevisionExtraction, EmbedModel: "nb3",
		Facts: []Fact{nbFact("A", "user", 1, 0, 0)}}).Facts[0].BeliefID
	bundle.clock.Set(t2)
	r := mustApply(t, store, &Batch{Scope: "s", Origin: RevisionExtraction, EmbedModel: "nb3",
		Facts: []Fact{nbFact("B", "user", 0, 1, 0), nbFact("C", "user", 0, 0, 1)}})
	b, c := r.Facts[0].BeliefID, r.Facts[1].BeliefID
	plain := mustApply(t, store, extraction("s", "2026-06-02", nil, fact("D", "a", ""))).Facts[0].BeliefID
	require.NotZero(t, plain)
	bundle.clock.Set(t3)
	d := mustApply(t, store, &Batch{Scope: "s", Origin: RevisionExtraction, EmbedModel: "nb3",
		Facts: []Fact{nbFact("E", "user", 1, 1, 0)}}).Facts[0].BeliefID
	mustApply(t, store, &Batch{Scope: "other", Origin: RevisionExtraction, EmbedModel: "nb3",
		Facts: []Fact{nbFact("A", "user", 1, 0, 0)}})

	ch, err := store.ChangedSince(ctx, "s", "nb3", time.Time{}, 0)
	require.NoError(t, err)
	require.Equal(t, &Changes{IDs: []int64{a, b, c, d}, UpTo: t3}, ch)

	// The limit is soft: the beliefs sharing the instant of the last one come along,
	// the belief without a vector counts for UpTo but is not a seed.
	ch, err = store.ChangedSince(ctx, "s", "nb3", time.Time{}, 2)
	require.NoError(t, err)
	require.Equal(t, &Changes{IDs: []int64{a, b, c}, UpTo: t2, More: true}, ch)

	ch, err = store.ChangedSince(ctx, "s", "nb3", t2, 2)
	require.NoError(t, err)
	require.Equal(t, &Changes{IDs: []int64{d}, UpTo: t3}, ch)

	ch, err = store.ChangedSince(ctx, "s", "nb3", t3, 0)
	require.NoError(t, err)
	require.Equal(t, &Changes{}, ch)

	// A superseded belief is not active: its new updated_at does not make it a change.
	bundle.clock.Set(t3.Add(time.Hour))
	mustApply(t, store, &Batch{Scope: "s", Origin: RevisionConsolidation, Candidates: []int64{a, d},
		Resolutions: []Resolution{{Index: 0, ReplacedBy: new(1), Action: ActionSupersede, Reason: ReasonDuplicate}}})
	ch, err = store.ChangedSince(ctx, "s", "nb3", t3, 0)
	require.NoError(t, err)
	require.Equal(t, &Changes{}, ch)
}

func TestNeighbors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)

	add := func(scope string, facts ...Fact) []int64 {
		t.Helper()
		res := mustApply(t, store, &Batch{Scope: scope, Origin: RevisionExtraction, EmbedModel: "nb3", Facts: facts})
		var out []int64
		for _, o := range res.Facts {
			out = append(out, o.BeliefID)
		}
		return out
	}
	s := add("s",
		nbFact("x", "user", 1, 0, 0),
		nbFact("x close", "user", 1, 0.1, 0),         // cos 0.995
		nbFact("x closer", "User", 1, 0.05, 0),       // cos 0.999, subject differs in case only
		nbFact("x sister", "user's sister", 1, 0, 0), // same vector, another subject
		nbFact("x far", "user", 1, 1, 0),             // cos 0.707
		nbFact("y", "user", 0, 1, 0),
	)
	// The same vector in another scope shares the model's index but is never a
	// neighbour.
	add("other", nbFact("x", "user", 1, 0, 0))

	ns, err := store.Neighbors(ctx, NeighborQuery{Scope: "s", Model: "nb3", Seeds: []int64{s[0]}, K: 8, MaxDistance: 0.2, SameSubject: true})
	require.NoError(t, err)
	require.Len(t, ns, 2)
	require.Equal(t, []int64{s[2], s[1]}, []int64{ns[0].ID, ns[1].ID}, "nearest first")
	require.Equal(t, s[0], ns[0].Seed)
	require.InDelta(t, 1-0.99875, ns[0].Distance, 1e-4)

	ns, err = store.Neighbors(ctx, NeighborQuery{Scope: "s", Model: "nb3", Seeds: []int64{s[0], s[5]}, K: 1, MaxDistance: 0.25})
	require.NoError(t, err)
	require.Equal(t, []Neighbor{{Seed: s[0], ID: s[3], Distance: 0}}, ns, "K bounds each seed; y has no neighbour within 0.25")

	// Only active beliefs are neighbours.
	mustApply(t, store, &Batch{Scope: "s", Origin: RevisionConsolidation, Candidates: []int64{s[2], s[1]},
		Resolutions: []Resolution{{Index: 0, ReplacedBy: new(1), Action: ActionSupersede, Reason: ReasonDuplicate}}})
	ns, err = store.Neighbors(ctx, NeighborQuery{Scope: "s", Model: "nb3", Seeds: []int64{s[0]}, K: 8, MaxDistance: 0.2, SameSubject: true})
	require.NoError(t, err)
	require.Len(t, ns, 1)
	require.Equal(t, s[1], ns[0].ID)

	_, err = store.Neighbors(ctx, NeighborQuery{Scope: "s", Model: "unknown", Seeds: []int64{s[0]}, K: 8, MaxDistance: 0.2})
	require.ErrorIs(t, err, ErrEmbeddingModel)

	bs, err := store.BeliefsByID(ctx, "s", []int64{s[1], s[0], 1 << 40})
	require.NoError(t, err)
	require.Equal(t, []int64{s[0], s[1]}, ids(bs))
}
