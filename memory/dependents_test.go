package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// dependentBundle is a scope where "time zone is US Eastern" was concluded from "lives
// in New York".
type dependentBundle struct {
	*testBundle
	store           *Store
	basis, timeZone int64
}

func setupDependent(t *testing.T) *dependentBundle {
	t.Helper()
	store, bundle := setup(t)
	basis := mustApply(t, store, extraction("u", "2026-01-10", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
	tz := fact("User's time zone is US Eastern", "time_zone", "")
	tz.Origin, tz.DependsOn = OriginInferred, []int{0}
	timeZone := mustApply(t, store, extraction("u", "2026-01-20", []int64{basis}, tz)).Facts[0].BeliefID
	return &dependentBundle{testBundle: bundle, store: store, basis: basis, timeZone: timeZone}
}

func (b *dependentBundle) belief(t *testing.T, id int64) *Belief {
	t.Helper()
	got, err := b.store.Get(context.Background(), id)
	require.NoError(t, err)
	return got
}

func (b *dependentBundle) openItems(t *testing.T) []Conflict {
	t.Helper()
	cs, err := b.store.Conflicts(context.Background(), "u", false)
	require.NoError(t, err)
	return cs
}

func TestDependsOnIsStoredAndShown(t *testing.T) {
	t.Parallel()
	b := setupDependent(t)
	tz := b.belief(t, b.timeZone)
	require.Equal(t, []int64{b.basis}, tz.DependsOn)
	require.False(t, tz.NeedsReview)
	require.Nil(t, b.belief(t, b.basis).DependsOn, "no basis: null in JSON")

	_, err := b.store.Apply(context.Background(), extraction("u", "2026-01-21", []int64{b.basis},
		Fact{Statement: "x", Attribute: "a", Confidence: 1, Origin: OriginInferred, DependsOn: []int{1}}))
	require.ErrorIs(t, err, ErrInvalid, "an index outside the candidates is invalid")
}

// Whatever retires a basis flags its active dependents with one basis_changed item each.
func TestBasisChangeFlagsDependents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, b *dependentBundle)
		// keepsTarget: the item names the basis (not when it was purged).
		keepsTarget bool
		reason      *Reason
		detail      string
	}{
		{"superseded", func(t *testing.T, b *dependentBundle) {
			mustApply(t, b.store, extraction("u", "2026-03-01", []int64{b.basis},
				resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
		}, true, new(ReasonTemporal), "superseded by belief"},
		{"retracted", func(t *testing.T, b *dependentBundle) {
			mustApply(t, b.store, extraction("u", "2026-03-01", []int64{b.basis},
				resolves(Fact{Confidence: 1, Origin: OriginUserStated}, 0, ActionRetract, ReasonCorrection)))
		}, true, new(ReasonCorrection), "retracted"},
		{"retracted by an operator's resolution", func(t *testing.T, b *dependentBundle) {
			mustApply(t, b.store, &Batch{Scope: "u", Origin: RevisionOperator, Candidates: []int64{b.basis},
				Resolutions: []Resolution{{Index: 0, Action: ActionRetract, Reason: ReasonTemporal}}})
		}, true, new(ReasonTemporal), "retracted"},
		{"forgotten", func(t *testing.T, b *dependentBundle) {
			_, err := b.store.Forget(context.Background(), Selection{Scope: "u", IDs: []int64{b.basis}})
			require.NoError(t, err)
		}, true, nil, "forgotten"},
		{"purged", func(t *testing.T, b *dependentBundle) {
			_, err := b.store.Purge(context.Background(), Selection{Scope: "u", IDs: []int64{b.basis}})
			require.NoError(t, err)
		}, false, nil, "erased"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupDependent(t)
			tc.change(t, b)
			require.True(t, b.belief(t, b.timeZone).NeedsReview)
			items := b.openItems(t)
			require.Len(t, items, 1)
			it := items[0]
			require.Equal(t, ConflictBasisChanged, it.Kind)
			require.Nil(t, it.Cause)
			require.Equal(t, b.timeZone, *it.BeliefID)
			require.Equal(t, "User's time zone is US Eastern", it.Statement)
			require.Equal(t, tc.reason, it.Reason)
			require.Contains(t, it.Detail, tc.detail)
			if tc.keepsTarget {
				require.Equal(t, b.basis, *it.TargetID)
			} else {
				require.Nil(t, it.TargetID)
				require.NotContains(t, it.Detail, nyc, "an erased basis leaves no text")
				require.Equal(t, 0, count(t, b.testBundle, "belief_dependency"), "no dependency names an erased belief")
			}
		})
	}
}

func TestFlagsOnceAndClosesWithTheDependent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDependent(t)
	mustApply(t, b.store, extraction("u", "2026-03-01", []int64{b.basis},
		resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
	_, err := b.store.Forget(ctx, Selection{Scope: "u", IDs: []int64{b.basis}})
	require.NoError(t, err)
	require.Len(t, b.openItems(t), 1, "a basis that changes again opens no second item")

	// A dependent retracted by any writer closes its items and its flag.
	mustApply(t, b.store, extraction("u", "2026-03-02", []int64{b.timeZone},
		resolves(Fact{Confidence: 1, Origin: OriginUserStated}, 0, ActionRetract, ReasonTemporal)))
	require.Empty(t, b.openItems(t))
	all, err := b.store.Conflicts(ctx, "u", true)
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, ResolvedRetracted, *all[0].Resolution)
	require.NotNil(t, all[0].ResolvedAt)
	require.False(t, b.belief(t, b.timeZone).NeedsReview)
}

func TestKeepClearsTheFlag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDependent(t)
	mustApply(t, b.store, extraction("u", "2026-03-01", []int64{b.basis},
		resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))

	_, err := b.store.Apply(ctx, &Batch{Scope: "u", Origin: RevisionExtraction, Candidates: []int64{b.timeZone}, Keep: []int{0}})
	require.ErrorIs(t, err, ErrInvalid, "extraction does not review")

	res := mustApply(t, b.store, &Batch{Scope: "u", Origin: RevisionConsolidation, Candidates: []int64{b.timeZone}, Keep: []int{0}})
	require.Equal(t, OutcomeKept, res.Kept[0].Kind)
	tz := b.belief(t, b.timeZone)
	require.False(t, tz.NeedsReview)
	require.Equal(t, StatusActive, tz.Status)
	require.Empty(t, b.openItems(t))
	all, err := b.store.Conflicts(ctx, "u", true)
	require.NoError(t, err)
	require.Equal(t, ResolvedKept, *all[0].Resolution)
}

// A fact never rests on the belief it revises.
func TestDependsOnItsOwnTargetIsDropped(t *testing.T) {
	t.Parallel()
	b := setupDependent(t)
	f := resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)
	f.DependsOn = []int{0, 0}
	id := mustApply(t, b.store, extraction("u", "2026-03-01", []int64{b.basis}, f)).Facts[0].BeliefID
	got := b.belief(t, id)
	require.Nil(t, got.DependsOn)
	require.False(t, got.NeedsReview)
}

// A purge by id erases the purged text from the beliefs concluded from it too: their
// statements go on to review prompts, webhooks and extraction prompts.
func TestPurgeRedactsDependentStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const code = "User's locker code is 5190-KX"
	basis := mustApply(t, store, embeddedBatch(extraction("u", "2026-01-10", nil,
		embedded(fact(code, "locker_code", ""), vecLocation)))).Facts[0].BeliefID
	gear := embedded(fact("User keeps gym gear at the club ("+code+")", "gym_gear", ""), vecCoffee)
	gear.Origin, gear.DependsOn = OriginInferred, []int{0}
	dependent := mustApply(t, store, embeddedBatch(extraction("u", "2026-01-20", []int64{basis}, gear))).Facts[0].BeliefID

	purged, err := store.Purge(ctx, Selection{Scope: "u", IDs: []int64{basis}})
	require.NoError(t, err)
	require.Equal(t, int64(1), purged.Counts[CountRedactedBeliefs])
	require.Empty(t, mentions(t, bundle, "5190-KX"), "no row keeps the purged text")
	got, err := store.Get(ctx, dependent)
	require.NoError(t, err)
	require.Equal(t, "User keeps gym gear at the club ([redacted])", got.Statement)
	require.True(t, got.NeedsReview, "its basis went: it awaits review")
	require.Equal(t, 0, count(t, bundle, "belief WHERE embedding IS NOT NULL AND statement LIKE '%redacted%'"),
		"the vector of the old statement goes with it")
	items, err := store.Conflicts(ctx, "u", false)
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.Equal(t, got.Statement, items[0].Statement)
}
