package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// reviewBundle is a scope with an authoritative plan and an extraction's refused
// attempt to supersede it.
type reviewBundle struct {
	*testBundle
	store      *Store
	plan, item int64
}

func setupReview(t *testing.T) *reviewBundle {
	t.Helper()
	store, bundle := setup(t)
	auth := fact("Account plan is Pro", "plan", "")
	auth.Origin = OriginAuthoritative
	plan := mustApply(t, store, &Batch{Scope: "u", Origin: RevisionOperator, At: day("2026-01-01"), Facts: []Fact{auth}}).Facts[0].BeliefID
	f := resolves(fact("Account plan is Free", "plan", ""), 0, ActionSupersede, ReasonTemporal)
	f.Quote = "we downgraded to Free"
	out := mustApply(t, store, extraction("u", "2026-02-01", []int64{plan}, f)).Facts[0]
	require.Equal(t, OutcomeConflict, out.Kind)
	return &reviewBundle{testBundle: bundle, store: store, plan: plan, item: out.ConflictID}
}

func (b *reviewBundle) current(t *testing.T) []string {
	t.Helper()
	bs, err := b.store.Current(context.Background(), "u")
	require.NoError(t, err)
	return statementsOf(bs)
}

func (b *reviewBundle) review(t *testing.T, id int64) *Conflict {
	t.Helper()
	c, err := b.store.Conflict(context.Background(), id)
	require.NoError(t, err)
	return c
}

func TestDecideApplyOverridesEntrenchment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupReview(t)
	b.clock.Set(day("2026-06-02"))
	got, err := b.store.Decide(ctx, Decision{ID: b.item, Verdict: VerdictApply, Note: "customer confirmed by mail",
		EmbedModel: "m", Embedding: []float32{1, 0, 0}})
	require.NoError(t, err)
	require.Equal(t, OutcomeSuperseded, got.Outcome.Kind)
	require.Equal(t, []string{"Account plan is Free"}, b.current(t))

	c := b.review(t, b.item)
	require.Equal(t, ResolvedApplied, *c.Resolution)
	require.Equal(t, "customer confirmed by mail", *c.Note)
	require.Equal(t, day("2026-06-02"), *c.ResolvedAt)
	require.Equal(t, c, &got.Item)

	evs, err := b.store.Events(ctx, "u", 0)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, RevisionOperator, evs[0].Origin)
	require.Contains(t, *evs[0].Rationale, "override of a refusal (entrenchment)", "the event records the override")
	require.Contains(t, *evs[0].Rationale, "customer confirmed by mail")
	newBelief, err := b.store.Get(ctx, *evs[0].NewBeliefID)
	require.NoError(t, err)
	require.Equal(t, day("2026-02-01"), newBelief.ValidFrom, "the proposal dates from its conversation")
	var model string
	require.NoError(t, b.schema.Pool.QueryRow(ctx, "SELECT embed_model FROM revision_event WHERE id = $1", evs[0].ID).Scan(&model))
	require.Equal(t, "m", model, "the decision is embedded as a few-shot example")
}

func TestDecideDismissChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupReview(t)
	before, err := b.store.All(ctx, "u")
	require.NoError(t, err)
	got, err := b.store.Decide(ctx, Decision{ID: b.item, Verdict: VerdictDismiss, EmbedModel: "m", Embedding: []float32{0, 1, 0}})
	require.NoError(t, err)
	require.Nil(t, got.Outcome)
	after, err := b.store.All(ctx, "u")
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.Equal(t, ResolvedDismissed, *b.review(t, b.item).Resolution)
	require.Nil(t, b.review(t, b.item).Note)
	open, err := b.store.Conflicts(ctx, "u", false)
	require.NoError(t, err)
	require.Empty(t, open)
	require.Equal(t, 1, count(t, b.testBundle, "belief_conflict WHERE embed_model = 'm'"), "a dismissal teaches too")
}

func TestDecideBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupReview(t)

	_, err := b.store.Decide(ctx, Decision{ID: b.item + 1000, Verdict: VerdictApply})
	require.ErrorIs(t, err, ErrNotFound)
	_, err = b.store.Decide(ctx, Decision{ID: b.item, Verdict: "maybe"})
	require.ErrorIs(t, err, ErrInvalid)

	_, err = b.store.Decide(ctx, Decision{ID: b.item, Verdict: VerdictDismiss})
	require.NoError(t, err)
	before, err := b.store.All(ctx, "u")
	require.NoError(t, err)
	for _, v := range []Verdict{VerdictApply, VerdictDismiss} {
		_, err = b.store.Decide(ctx, Decision{ID: b.item, Verdict: v, Note: "again"})
		require.ErrorIs(t, err, ErrClosed, v)
		require.ErrorContains(t, err, "dismissed")
	}
	after, err := b.store.All(ctx, "u")
	require.NoError(t, err)
	require.Equal(t, before, after, "a second decision changes nothing")
	require.Nil(t, b.review(t, b.item).Note)
}

// A refused revision whose target changed since is not applied over the change.
func TestDecideTargetChangedSince(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupReview(t)
	op := resolves(fact("Account plan is Team", "plan", ""), 0, ActionSupersede, ReasonTemporal)
	mustApply(t, b.store, &Batch{Scope: "u", Origin: RevisionOperator, At: day("2026-03-01"), Candidates: []int64{b.plan}, Facts: []Fact{op}})
	before, err := b.store.All(ctx, "u")
	require.NoError(t, err)

	_, err = b.store.Decide(ctx, Decision{ID: b.item, Verdict: VerdictApply})
	require.ErrorIs(t, err, ErrNotApplicable)
	after, err := b.store.All(ctx, "u")
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.True(t, b.review(t, b.item).Open())
	require.Equal(t, 1, count(t, b.testBundle, "belief_conflict"), "the refusal of the attempt is not kept either")

	// It can still be dismissed.
	_, err = b.store.Decide(ctx, Decision{ID: b.item, Verdict: VerdictDismiss})
	require.NoError(t, err)
}

func TestDecideInvalidIndexIsNotApplicable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	out := mustApply(t, store, extraction("u", "2026-02-01", nil,
		resolves(fact("User lives in Oslo", "location", ""), 3, ActionSupersede, ReasonTemporal))).Facts[0]
	require.Equal(t, OutcomeConflict, out.Kind)
	_, err := store.Decide(ctx, Decision{ID: out.ConflictID, Verdict: VerdictApply})
	require.ErrorIs(t, err, ErrNotApplicable)
	require.ErrorContains(t, err, "names no belief")
}

func TestDecideEventAppliesTheStoredReplacement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	paris := mustApply(t, store, extraction("u", "2026-03-01", nil, event("User visited Paris", ""))).Facts[0].BeliefID
	out := mustApply(t, store, extraction("u", "2026-04-01", []int64{paris},
		resolves(event("User visited Rome", ""), 0, ActionSupersede, ReasonTemporal))).Facts[0]
	_, err := store.Decide(ctx, Decision{ID: out.ConflictID, Verdict: VerdictApply})
	require.NoError(t, err)
	got, err := store.Get(ctx, paris)
	require.NoError(t, err)
	require.Equal(t, StatusSuperseded, got.Status)
	require.Equal(t, []int64{out.BeliefID}, got.SupersededBy)
}

func TestDecideBasisChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, v := range []Verdict{VerdictApply, VerdictDismiss} {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			b := setupDependent(t)
			mustApply(t, b.store, extraction("u", "2026-03-01", []int64{b.basis},
				resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
			items := b.openItems(t)
			require.Len(t, items, 1)
			_, err := b.store.Decide(ctx, Decision{ID: items[0].ID, Verdict: v})
			require.NoError(t, err)

			tz := b.belief(t, b.timeZone)
			require.False(t, tz.NeedsReview)
			require.Empty(t, b.openItems(t))
			if v == VerdictDismiss {
				require.Equal(t, StatusActive, tz.Status)
				return
			}
			require.Equal(t, StatusRetracted, tz.Status)
			require.Equal(t, day("2026-03-01"), *tz.ValidUntil, "it stopped holding when its basis did")
			c, err := b.store.Conflict(ctx, items[0].ID)
			require.NoError(t, err)
			require.Equal(t, ResolvedApplied, *c.Resolution)
		})
	}
}

// TestDecideInScope: a decision that names its scope finds only that scope's item.
func TestDecideInScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	nycID := mustApply(t, store, extraction("user:1", "2026-01-15", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
	coast := fact("User lives on the east coast", "coast", "")
	coast.Origin, coast.DependsOn = OriginInferred, []int{0}
	mustApply(t, store, extraction("user:1", "2026-01-16", []int64{nycID}, coast))
	mustApply(t, store, extraction("user:1", "2026-03-20", []int64{nycID},
		resolves(fact(miami, "location", "2026-02-20"), 0, ActionSupersede, ReasonTemporal)))
	items, err := store.Conflicts(ctx, "user:1", false)
	require.NoError(t, err)
	require.Len(t, items, 1)

	_, err = store.Decide(ctx, Decision{ID: items[0].ID, Scope: "user:2", Verdict: VerdictDismiss})
	require.ErrorIs(t, err, ErrNotFound)
	decided, err := store.Decide(ctx, Decision{ID: items[0].ID, Scope: "user:1", Verdict: VerdictDismiss})
	require.NoError(t, err)
	require.Equal(t, "resolved", decided.Item.Status)
}
