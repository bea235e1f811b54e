package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestForgetHidesFromEveryReadButAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "user:forget"
	nycID, miamiID := seedNYCMiami(t, store, bundle, scope)

	bundle.clock.Set(day("2026-05-01"))
	forgotten, err := store.Forget(ctx, Selection{Scope: scope, IDs: []int64{miamiID}})
	require.NoError(t, err)
	require.Equal(t, []int64{miamiID}, forgotten)

	current, err := store.Current(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, []string{"User has a dog", "User likes espresso"}, statementsOf(current))
	asOf, err := store.AsOf(ctx, scope, day("2026-04-01"))
	require.NoError(t, err)
	require.NotContains(t, statementsOf(asOf), miami)
	// Before the forget, memory held Miami on 2026-04-01; a forgotten belief is not
	// even remembered as once held.
	known, err := store.KnownAt(ctx, scope, day("2026-04-01"))
	require.NoError(t, err)
	require.NotContains(t, statementsOf(known), miami)
	history, err := store.History(ctx, nycID)
	require.NoError(t, err)
	require.Equal(t, []int64{nycID}, ids(history))
	_, err = store.History(ctx, miamiID)
	require.ErrorIs(t, err, ErrNotFound)
	events, err := store.Events(ctx, scope, 0)
	require.NoError(t, err)
	require.Empty(t, events, "the NYC→Miami event quotes Miami")
	rec := recall(t, store, RecallQuery{Scope: scope, Text: "Where did the user live before?", Vector: vecLocation, EmbedModel: tinyModel})
	require.Equal(t, RecallHistory, rec.Mode)
	require.NotContains(t, statementsOf(rec.Beliefs), miami)
	require.Contains(t, statementsOf(rec.Beliefs), nyc)

	// What the next extraction prompt is built from: candidates are active beliefs,
	// counted, listed, nearest to the transcript, or on the transcript's attributes.
	cur, err := store.CurrentUpTo(ctx, scope, 100)
	require.NoError(t, err)
	require.Len(t, cur, 2)
	require.NotContains(t, statementsOf(cur), miami)
	near, err := store.Nearest(ctx, scope, tinyModel, vecLocation, 10)
	require.NoError(t, err)
	require.NotContains(t, statementsOf(near), miami)
	byAttr, err := store.ActiveWithAttributes(ctx, scope, []string{"location"}, nil, 10)
	require.NoError(t, err)
	require.Empty(t, byAttr)

	all, err := store.All(ctx, scope)
	require.NoError(t, err)
	m := byStatement(t, all, miami)
	require.Equal(t, StatusForgotten, m.Status)
	require.Equal(t, day("2026-05-01"), *m.RetiredAt)
	got, err := store.Get(ctx, miamiID)
	require.NoError(t, err)
	require.Equal(t, StatusForgotten, got.Status, "an operator still finds it by id")

	// Forgetting is idempotent; a superseded belief keeps the retirement it had.
	forgotten, err = store.Forget(ctx, Selection{Scope: scope, IDs: []int64{miamiID}})
	require.NoError(t, err)
	require.Empty(t, forgotten)
	retired := byStatement(t, all, nyc).RetiredAt
	forgotten, err = store.Forget(ctx, Selection{Scope: scope, Match: "  new YORK "})
	require.NoError(t, err)
	require.Equal(t, []int64{nycID}, forgotten)
	require.Equal(t, *retired, *byStatement(t, mustAll(t, store, scope), nyc).RetiredAt)

	forgotten, err = store.Forget(ctx, Selection{Scope: scope, All: true})
	require.NoError(t, err)
	require.Len(t, forgotten, 2)
	current, err = store.Current(ctx, scope)
	require.NoError(t, err)
	require.Empty(t, current)
	require.Len(t, mustAll(t, store, scope), 4)
	require.Equal(t, 4, count(t, bundle, "belief"), "a soft forget deletes nothing")
	require.Equal(t, 1, count(t, bundle, "revision_event"))
}

func TestForgetMatchesQuotes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	quoted := fact("User has a gate code", "gate_code", "")
	quoted.Quote = "my gate code is 4471"
	mustApply(t, store, extraction("user:1", "2026-01-01", nil, quoted, fact("User likes tea", "drink", "")))

	forgotten, err := store.Forget(ctx, Selection{Scope: "user:1", Match: "4471"})
	require.NoError(t, err)
	require.Len(t, forgotten, 1)
	current, err := store.Current(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, []string{"User likes tea"}, statementsOf(current))

	forgotten, err = store.Forget(ctx, Selection{Scope: "user:1", Match: "nothing like it"})
	require.NoError(t, err)
	require.Empty(t, forgotten, "no match is not an error")
}

func TestForgetErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	id := mustApply(t, store, extraction("user:1", "2026-01-01", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
	mustApply(t, store, extraction("user:2", "2026-01-01", nil, fact(miami, "location", "")))

	for name, sel := range map[string]Selection{
		"nothing":       {Scope: "user:1"},
		"two":           {Scope: "user:1", IDs: []int64{id}, All: true},
		"blank match":   {Scope: "user:1", Match: "  "},
		"no scope":      {IDs: []int64{id}},
		"NUL in match":  {Scope: "user:1", Match: "a\x00"},
		"match and ids": {Scope: "user:1", IDs: []int64{id}, Match: "York"},
	} {
		_, err := store.Forget(ctx, sel)
		require.ErrorIs(t, err, ErrSelection, name)
		_, err = store.Purge(ctx, sel)
		require.ErrorIs(t, err, ErrSelection, name)
	}
	for name, sel := range map[string]Selection{
		"unknown id":           {Scope: "user:1", IDs: []int64{id, 987654}},
		"id of other scope":    {Scope: "user:2", IDs: []int64{id}},
		"unknown scope":        {Scope: "user:nobody", All: true},
		"unknown scope, match": {Scope: "user:nobody", Match: "York"},
	} {
		_, err := store.Forget(ctx, sel)
		require.ErrorIs(t, err, ErrNotFound, name)
		_, err = store.Purge(ctx, sel)
		require.ErrorIs(t, err, ErrNotFound, name)
	}
	current, err := store.Current(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, []string{nyc}, statementsOf(current), "a failed forget changes nothing")
}

// Forget and Purge take the scope's lock: they wait for a revision in flight and see
// what it wrote, instead of interleaving with it.
func TestForgetSerializesWithApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for name, forget := range map[string]func(*Store, Selection) (int, error){
		"Forget": func(s *Store, sel Selection) (int, error) {
			ids, err := s.Forget(ctx, sel)
			return len(ids), err
		},
		"Purge": func(s *Store, sel Selection) (int, error) {
			p, err := s.Purge(ctx, sel)
			if err != nil {
				return 0, err
			}
			return int(p.Counts["belief"]), nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, bundle := setup(t)
			id := mustApply(t, store, extraction("user:1", "2026-01-01", nil, fact(nyc, "location", ""))).Facts[0].BeliefID

			tx, err := bundle.schema.Pool.Begin(ctx)
			require.NoError(t, err)
			defer tx.Rollback(ctx)
			_, err = store.ApplyTx(ctx, tx, extraction("user:1", "2026-02-01", []int64{id},
				resolves(fact("User lives in New York, Brooklyn", "location", ""), 0, ActionSupersede, ReasonTemporal)))
			require.NoError(t, err)

			done := make(chan int)
			go func() {
				n, err := forget(store, Selection{Scope: "user:1", Match: "new york"})
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
				done <- n
			}()
			waitForAdvisoryLockWaiter(t, bundle)
			require.NoError(t, tx.Commit(ctx))
			require.Equal(t, 2, <-done, "both the old belief and the one committed meanwhile")
			current, err := store.Current(ctx, "user:1")
			require.NoError(t, err)
			require.Empty(t, current)
		})
	}
}
