package memory

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// revertBundle is a scope whose revisions are reverted, with a clock that moves a day
// at each step so that each transaction has its own time.
type revertBundle struct {
	*testBundle
	store *Store
	scope string
}

func setupRevert(t *testing.T) *revertBundle {
	t.Helper()
	store, bundle := setup(t)
	return &revertBundle{testBundle: bundle, store: store, scope: "u"}
}

// apply applies b a day after the last step.
func (b *revertBundle) apply(t *testing.T, batch *Batch) Outcome {
	t.Helper()
	b.clock.Advance(24 * time.Hour)
	return mustApply(t, b.store, batch).All()[0]
}

func (b *revertBundle) revert(t *testing.T, event int64, note string) *Reverted {
	t.Helper()
	b.clock.Advance(24 * time.Hour)
	got, err := b.store.Revert(context.Background(), RevertParams{EventID: event, Note: note, By: "ops"})
	require.NoError(t, err)
	return got
}

func (b *revertBundle) belief(t *testing.T, id int64) Belief {
	t.Helper()
	return *belief(t, b.store, id)
}

func (b *revertBundle) current(t *testing.T) []string {
	t.Helper()
	bs, err := b.store.Current(context.Background(), b.scope)
	require.NoError(t, err)
	return statementsOf(bs)
}

// state is everything a refused revert must leave as it was.
func (b *revertBundle) state(t *testing.T) ([]Belief, []Event, []Conflict) {
	t.Helper()
	ctx := context.Background()
	all, err := b.store.All(ctx, b.scope)
	require.NoError(t, err)
	evs, err := b.store.Events(ctx, b.scope, 0)
	require.NoError(t, err)
	cs, err := b.store.Conflicts(ctx, b.scope, true)
	require.NoError(t, err)
	return all, evs, cs
}

// refused reverts event and checks that it is refused with a reason containing why,
// and that nothing changed.
func (b *revertBundle) refused(t *testing.T, event int64, why string) {
	t.Helper()
	beliefs, events, items := b.state(t)
	b.clock.Advance(24 * time.Hour)
	_, err := b.store.Revert(context.Background(), RevertParams{EventID: event, Note: "wrong"})
	require.ErrorIs(t, err, ErrRevertRefused)
	var refused *RevertRefusedError
	require.ErrorAs(t, err, &refused)
	require.Equal(t, event, refused.EventID)
	require.Contains(t, refused.Reason, why)
	after, afterEvents, afterItems := b.state(t)
	require.Equal(t, beliefs, after, "a refused revert changes no belief")
	require.Equal(t, events, afterEvents, "a refused revert writes no event")
	require.Equal(t, items, afterItems, "a refused revert changes no review item")
}

func TestRevertSupersedeRestoresTheOldBelief(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRevert(t)
	ep := insertTranscript(t, b.testBundle, b.scope, "c1", userSays("I live in New York City"))
	nycID := b.apply(t, from(ep, extraction(b.scope, "2026-01-10", nil, quoted(fact(nyc, "location", ""), "I live in New York City")))).BeliefID
	before := b.belief(t, nycID)

	sup := b.apply(t, extraction(b.scope, "2026-03-01", []int64{nycID}, resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
	require.Equal(t, OutcomeSuperseded, sup.Kind)
	require.Equal(t, []string{miami}, b.current(t))

	got := b.revert(t, sup.EventID, "they only visited Miami")
	require.Equal(t, before, b.belief(t, nycID), "New York is current again exactly as before: status, validity, links, provenance")
	m := b.belief(t, sup.BeliefID)
	require.Equal(t, StatusRetracted, m.Status)
	require.Equal(t, m.ValidFrom, *m.ValidUntil, "retracted as never true")
	require.Equal(t, b.clock.Now(), *m.RetiredAt)
	require.Equal(t, []string{nyc}, b.current(t))
	require.Equal(t, []int64{nycID}, got.Restored)
	require.Equal(t, []int64{sup.BeliefID}, got.Retracted)
	require.Nil(t, got.Unreinforced)

	// The revert is an operator's event naming the reverted one, which says by which and when.
	require.Equal(t, ActionRevert, got.Revert.Action)
	require.Equal(t, RevisionOperator, got.Revert.Origin)
	require.Equal(t, ReasonCorrection, got.Revert.Reason)
	require.Equal(t, sup.EventID, *got.Revert.Reverts)
	require.Equal(t, "they only visited Miami", *got.Revert.Excerpt)
	require.Contains(t, *got.Revert.Rationale, "as ops")
	require.Equal(t, nycID, got.Revert.OldBeliefID)
	require.Equal(t, sup.BeliefID, *got.Revert.NewBeliefID)
	require.Nil(t, got.Revert.RevertedBy)
	require.Equal(t, sup.EventID, got.Event.ID)
	require.Equal(t, got.Revert.ID, *got.Event.RevertedBy)
	require.Equal(t, b.clock.Now(), *got.Event.RevertedAt)
	require.Nil(t, got.Event.Reverts)

	evs, err := b.store.Events(ctx, b.scope, 0)
	require.NoError(t, err)
	require.Equal(t, []Event{got.Revert, got.Event}, evs, "events read as Revert answered them, newest first")

	// Undone once: again, or the revert itself, is refused.
	b.refused(t, sup.EventID, "reverted already, by event")
	b.refused(t, got.Revert.ID, "itself a revert")
}

func TestRevertRetraction(t *testing.T) {
	t.Parallel()
	t.Run("PureContraction", func(t *testing.T) {
		t.Parallel()
		b := setupRevert(t)
		kafka := b.apply(t, extraction(b.scope, "2026-02-01", nil, fact("Team is migrating to Kafka", "plan", ""))).BeliefID
		before := b.belief(t, kafka)
		ret := b.apply(t, extraction(b.scope, "2026-03-01", []int64{kafka},
			resolves(Fact{Confidence: 0.9, Origin: OriginUserStated, Quote: "no Kafka"}, 0, ActionRetract, ReasonTemporal)))
		require.Equal(t, OutcomeRetracted, ret.Kind)
		require.Empty(t, b.current(t))

		got := b.revert(t, ret.EventID, "")
		require.Equal(t, before, b.belief(t, kafka), "current again, exactly as before")
		require.Equal(t, []int64{kafka}, got.Restored)
		require.Empty(t, got.Retracted)
		require.Nil(t, got.Revert.NewBeliefID)
		require.Nil(t, got.Revert.Excerpt, "no note, no excerpt")
	})

	t.Run("WithReplacingStatement", func(t *testing.T) {
		t.Parallel()
		b := setupRevert(t)
		py := b.apply(t, extraction(b.scope, "2026-02-01", nil, fact("User writes Python", "language", ""))).BeliefID
		before := b.belief(t, py)
		ret := b.apply(t, extraction(b.scope, "2026-03-01", []int64{py},
			resolves(fact("User writes Rust", "language", ""), 0, ActionRetract, ReasonCorrection)))
		got := b.revert(t, ret.EventID, "they write both")
		require.Equal(t, before, b.belief(t, py))
		rust := b.belief(t, ret.BeliefID)
		require.Equal(t, StatusRetracted, rust.Status)
		require.Equal(t, rust.ValidFrom, *rust.ValidUntil)
		require.Equal(t, []int64{ret.BeliefID}, got.Retracted)
		require.Equal(t, []string{"User writes Python"}, b.current(t))
	})
}

func TestRevertReinforcementTakesCountAndProvenanceBack(t *testing.T) {
	t.Parallel()
	b := setupRevert(t)
	ep1 := insertTranscript(t, b.testBundle, b.scope, "c1", userSays("I love dark roast"))
	ep2 := insertTranscript(t, b.testBundle, b.scope, "c2", userSays("dark roast, always"))
	coffee := b.apply(t, from(ep1, extraction(b.scope, "2026-01-01", nil, quoted(fact("User prefers dark roast coffee", "coffee", ""), "I love dark roast")))).BeliefID
	before := b.belief(t, coffee)
	require.Equal(t, []int64{ep1}, before.Episodes)

	re := b.apply(t, from(ep2, extraction(b.scope, "2026-02-01", []int64{coffee}, restating(0, "dark roast, always"))))
	require.Equal(t, OutcomeReinforced, re.Kind)
	mid := b.belief(t, coffee)
	require.Equal(t, 1, mid.ReinforcedCount)
	require.Equal(t, day("2026-02-01"), mid.LastSeenAt)
	require.Equal(t, []int64{ep1, ep2}, mid.Episodes)

	got := b.revert(t, re.EventID, "that was someone else")
	require.Equal(t, before, b.belief(t, coffee), "count, last seen and episodes go back")
	require.Equal(t, coffee, *got.Unreinforced)
	require.Empty(t, got.Restored)
	fromEp2, err := b.store.FromEpisode(context.Background(), b.scope, ep2)
	require.NoError(t, err)
	require.Empty(t, fromEp2, "the reverted restatement no longer credits its episode")
}

// Consolidation chose an existing belief over another: the revert brings the other back
// and leaves the chosen one as it was.
func TestRevertConsolidationKeepsTheChosenBelief(t *testing.T) {
	t.Parallel()
	b := setupRevert(t)
	a := b.apply(t, extraction(b.scope, "2026-01-01", nil, fact("User likes tea", "drink", ""))).BeliefID
	c := b.apply(t, extraction(b.scope, "2026-01-02", nil, fact("User enjoys drinking tea", "drink", ""))).BeliefID
	beforeA, beforeC := b.belief(t, a), b.belief(t, c)
	sup := b.apply(t, &Batch{Scope: b.scope, Origin: RevisionConsolidation, Candidates: []int64{a, c},
		Resolutions: []Resolution{{Index: 0, ReplacedBy: new(1), Action: ActionSupersede, Reason: ReasonDuplicate}}})
	require.Equal(t, OutcomeSuperseded, sup.Kind)

	got := b.revert(t, sup.EventID, "not the same")
	require.Equal(t, beforeA, b.belief(t, a))
	require.Equal(t, beforeC, b.belief(t, c), "the belief consolidation chose existed before: it stays")
	require.Empty(t, got.Retracted)
}

func TestRevertFlagsDependentsAndRestoresTheirFlags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := setupDependent(t)
	b := &revertBundle{testBundle: d.testBundle, store: d.store, scope: "u"}
	sup := b.apply(t, extraction("u", "2026-03-01", []int64{d.basis}, resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
	// Consolidation found the time zone still holds; the revert changes its basis again.
	b.apply(t, &Batch{Scope: "u", Origin: RevisionConsolidation, Candidates: []int64{d.timeZone}, Keep: []int{0}})
	require.False(t, d.belief(t, d.timeZone).NeedsReview)

	got := b.revert(t, sup.EventID, "")
	require.True(t, d.belief(t, d.timeZone).NeedsReview, "a dependent of a belief the revert restored is flagged")
	items := d.openItems(t)
	require.Len(t, items, 1)
	require.Equal(t, d.timeZone, *items[0].BeliefID)
	require.Equal(t, d.basis, *items[0].TargetID)
	require.Equal(t, RevisionOperator, items[0].Origin)
	require.Contains(t, items[0].Detail, "restored by an operator's revert of event")
	require.Equal(t, []int64{d.basis}, got.Restored)
	flagged, err := d.store.Flagged(ctx, "u", 10)
	require.NoError(t, err)
	require.Len(t, flagged, 1)
	require.Equal(t, []ChangedBasis{{ID: &d.basis, Statement: nyc, Status: "active"}}, flagged[0].Bases,
		"consolidation is asked about a basis that holds again, by its words")

	// A belief flagged when the revision retired it is flagged again when it comes back.
	store := d.store
	x := b.apply(t, extraction("v", "2026-01-01", nil, fact("User works at Acme", "employer", ""))).BeliefID
	dep := fact("User commutes to Acme's office", "commute", "")
	dep.DependsOn = []int{0}
	y := b.apply(t, extraction("v", "2026-01-02", []int64{x}, dep)).BeliefID
	b.apply(t, extraction("v", "2026-02-01", []int64{x}, resolves(fact("User works at Initech", "employer", ""), 0, ActionSupersede, ReasonTemporal)))
	beforeY := b.belief(t, y)
	require.True(t, beforeY.NeedsReview)
	sup = b.apply(t, extraction("v", "2026-02-02", []int64{y}, resolves(fact("User works from home", "commute", ""), 0, ActionSupersede, ReasonTemporal)))
	require.False(t, b.belief(t, y).NeedsReview, "retired, its item closed")
	b.revert(t, sup.EventID, "")
	require.Equal(t, beforeY, b.belief(t, y), "flag and open item back, as before")
	open, err := store.Conflicts(ctx, "v", false)
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, y, *open[0].BeliefID)
}

func TestRevertRefusesWhatLaterRevisionsBuiltOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// setupChain is New York superseded by Miami.
	setupChain := func(t *testing.T) (*revertBundle, int64, Outcome) {
		b := setupRevert(t)
		nycID := b.apply(t, extraction(b.scope, "2026-01-10", nil, fact(nyc, "location", ""))).BeliefID
		sup := b.apply(t, extraction(b.scope, "2026-03-01", []int64{nycID}, resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
		return b, nycID, sup
	}

	t.Run("SupersededAgain", func(t *testing.T) {
		t.Parallel()
		b, nycID, sup := setupChain(t)
		again := b.apply(t, extraction(b.scope, "2026-05-01", []int64{sup.BeliefID}, resolves(fact("User lives in Austin", "location", ""), 0, ActionSupersede, ReasonTemporal)))
		b.refused(t, sup.EventID, "only the latest revision of a chain is reverted")

		// Undone from the newest, the chain unwinds.
		b.revert(t, again.EventID, "")
		require.Equal(t, []string{miami}, b.current(t))
		b.revert(t, sup.EventID, "")
		require.Equal(t, []string{nyc}, b.current(t))
		require.Equal(t, StatusActive, b.belief(t, nycID).Status)
	})

	t.Run("StoredAsHistory", func(t *testing.T) {
		t.Parallel()
		b, nycID, sup := setupChain(t)
		// Learned later: before New York, Boston. It is stored as history, ended by New
		// York; undoing that would make Boston current beside Miami.
		hist := b.apply(t, extraction(b.scope, "2026-04-01", []int64{nycID},
			resolves(fact("User lives in Boston", "location", "2025-06-01"), 0, ActionSupersede, ReasonTemporal)))
		require.Equal(t, OutcomeBackfilled, hist.Kind)
		b.refused(t, hist.EventID, "as history ended by belief")
		require.Equal(t, []string{miami}, b.current(t))
		require.NotEqual(t, sup.EventID, hist.EventID)
	})

	t.Run("ReinforcedLater", func(t *testing.T) {
		t.Parallel()
		b, _, sup := setupChain(t)
		b.apply(t, extraction(b.scope, "2026-04-01", []int64{sup.BeliefID}, restating(0, "still in Miami")))
		b.refused(t, sup.EventID, "(reinforce) revised its beliefs since")
	})

	t.Run("BasisOfALaterBelief", func(t *testing.T) {
		t.Parallel()
		b, _, sup := setupChain(t)
		tz := fact("User's time zone is US Eastern", "time_zone", "")
		tz.DependsOn = []int{0}
		dep := b.apply(t, extraction(b.scope, "2026-04-01", []int64{sup.BeliefID}, tz)).BeliefID
		b.refused(t, sup.EventID, "was concluded from belief")
		_, err := b.store.Forget(ctx, Selection{Scope: b.scope, IDs: []int64{dep}})
		require.NoError(t, err)
		b.revert(t, sup.EventID, "") // a forgotten conclusion is built on nothing
	})

	t.Run("FlaggedByItAndRevisedSince", func(t *testing.T) {
		t.Parallel()
		d := setupDependent(t)
		b := &revertBundle{testBundle: d.testBundle, store: d.store, scope: "u"}
		sup := b.apply(t, extraction("u", "2026-03-01", []int64{d.basis}, resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
		items := d.openItems(t)
		require.Len(t, items, 1)
		b.clock.Advance(24 * time.Hour)
		_, err := d.store.Decide(ctx, Decision{ID: items[0].ID, Verdict: VerdictApply})
		require.NoError(t, err)
		b.refused(t, sup.EventID, "was flagged by it and revised since")
	})

	t.Run("Forgotten", func(t *testing.T) {
		t.Parallel()
		b, nycID, sup := setupChain(t)
		_, err := b.store.Forget(ctx, Selection{Scope: b.scope, IDs: []int64{nycID}})
		require.NoError(t, err)
		b.refused(t, sup.EventID, "is forgotten")
	})

	t.Run("SlotTakenSinceARetraction", func(t *testing.T) {
		t.Parallel()
		// Boston is retracted; later an independent statement fills its place. Boston
		// current again would stand beside Denver: refused, until Denver goes.
		b := setupRevert(t)
		boston := b.apply(t, extraction(b.scope, "2026-01-10", nil, fact("User lives in Boston", "location", ""))).BeliefID
		ret := b.apply(t, extraction(b.scope, "2026-02-01", []int64{boston},
			resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonCorrection)))
		denver := b.apply(t, extraction(b.scope, "2026-03-01", nil, fact("User lives in Denver", "location", ""))).BeliefID
		b.refused(t, ret.EventID, fmt.Sprintf("belief %d, recorded since, is current for location of user", denver))
		require.Equal(t, []string{"User lives in Denver"}, b.current(t))

		b.clock.Advance(24 * time.Hour)
		_, err := b.store.Forget(ctx, Selection{Scope: b.scope, IDs: []int64{denver}})
		require.NoError(t, err)
		b.revert(t, ret.EventID, "")
		require.Equal(t, []string{"User lives in Boston"}, b.current(t))
	})

	t.Run("SlotTakenInTheSameBatch", func(t *testing.T) {
		t.Parallel()
		b := setupRevert(t)
		boston := b.apply(t, extraction(b.scope, "2026-01-10", nil, fact("User lives in Boston", "location", ""))).BeliefID
		b.clock.Advance(24 * time.Hour)
		res := mustApply(t, b.store, extraction(b.scope, "2026-02-01", []int64{boston},
			resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonCorrection),
			fact("User lives in Denver", "location", "")))
		b.refused(t, res.Facts[0].EventID, "recorded since, is current for location of user")
	})

	t.Run("SlotSharedBeforeTheRetraction", func(t *testing.T) {
		t.Parallel()
		// Two values held side by side before the retraction: its revert brings back
		// that state, and is not refused.
		b := setupRevert(t)
		tea := b.apply(t, extraction(b.scope, "2026-01-10", nil, fact("User likes tea", "drink", ""))).BeliefID
		b.apply(t, extraction(b.scope, "2026-01-11", nil, fact("User likes coffee", "drink", "")))
		ret := b.apply(t, extraction(b.scope, "2026-02-01", []int64{tea},
			resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonCorrection)))
		b.revert(t, ret.EventID, "")
		require.ElementsMatch(t, []string{"User likes tea", "User likes coffee"}, b.current(t))
	})

	t.Run("MovedStart", func(t *testing.T) {
		t.Parallel()
		b := setupRevert(t)
		ep1 := insertTranscript(t, b.testBundle, b.scope, "late", userSays("I drink tea"))
		ep2 := insertTranscript(t, b.testBundle, b.scope, "early", userSays("tea for years"))
		tea := b.apply(t, from(ep1, extraction(b.scope, "2026-03-01", nil, quoted(fact("User drinks tea", "drink", ""), "I drink tea")))).BeliefID
		// Processed late, an earlier conversation said the same: the belief now starts then.
		re := b.apply(t, from(ep2, extraction(b.scope, "2026-01-01", []int64{tea}, restating(0, "tea for years"))))
		require.Equal(t, OutcomeReinforced, re.Kind)
		b.refused(t, re.EventID, "moved the start")
	})
}

func TestRevertErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRevert(t)
	_, err := b.store.Revert(ctx, RevertParams{EventID: 999_999})
	require.ErrorIs(t, err, ErrNotFound)
	_, err = b.store.Revert(ctx, RevertParams{EventID: 0})
	require.ErrorIs(t, err, ErrInvalid)
	kafka := b.apply(t, extraction(b.scope, "2026-02-01", nil, fact("Team uses Kafka", "plan", ""))).BeliefID
	ret := b.apply(t, extraction(b.scope, "2026-03-01", []int64{kafka}, resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonTemporal)))
	_, err = b.store.Revert(ctx, RevertParams{EventID: ret.EventID, Note: strings.Repeat("x", MaxNoteLen+1)})
	require.ErrorIs(t, err, ErrInvalid, "a note over the limit changes nothing")
	require.Empty(t, b.current(t))
	got, err := b.store.Revert(ctx, RevertParams{EventID: ret.EventID, By: strings.Repeat("k", 2*MaxLabelLen)})
	require.NoError(t, err, "a long name is clipped, never a refusal")
	require.Contains(t, *got.Revert.Rationale, " as "+strings.Repeat("k", MaxLabelLen))
	require.NotContains(t, *got.Revert.Rationale, strings.Repeat("k", MaxLabelLen+1))
}

// An event written before the engine kept what it changed is judged by time: the belief
// a revision stored was recorded with it, one it chose was recorded before.
func TestRevertEventsWithoutPrior(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRevert(t)
	nycID := b.apply(t, extraction(b.scope, "2026-01-10", nil, fact(nyc, "location", ""))).BeliefID
	sup := b.apply(t, extraction(b.scope, "2026-03-01", []int64{nycID}, resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
	tea := b.apply(t, extraction(b.scope, "2026-01-01", nil, fact("User likes tea", "drink", ""))).BeliefID
	twin := b.apply(t, extraction(b.scope, "2026-01-02", nil, fact("User enjoys drinking tea", "drink", ""))).BeliefID
	dup := b.apply(t, &Batch{Scope: b.scope, Origin: RevisionConsolidation, Candidates: []int64{tea, twin},
		Resolutions: []Resolution{{Index: 0, ReplacedBy: new(1), Action: ActionSupersede, Reason: ReasonDuplicate}}})
	_, err := b.schema.Pool.Exec(ctx, "UPDATE revision_event SET prior = NULL")
	require.NoError(t, err)

	require.Equal(t, []int64{sup.BeliefID}, b.revert(t, sup.EventID, "").Retracted, "stored by the revision")
	require.Empty(t, b.revert(t, dup.EventID, "").Retracted, "chosen by it")
	require.Equal(t, StatusActive, b.belief(t, twin).Status)
}

// A revert takes the scope's lock before it reads: a revision committed while it waits
// is one it sees, and builds on the reverted one, so the revert is refused.
func TestRevertSerializesWithApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRevert(t)
	nycID := b.apply(t, extraction(b.scope, "2026-01-10", nil, fact(nyc, "location", ""))).BeliefID
	sup := b.apply(t, extraction(b.scope, "2026-03-01", []int64{nycID}, resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))

	tx, err := b.schema.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = b.store.ApplyTx(ctx, tx, extraction(b.scope, "2026-04-01", []int64{sup.BeliefID}, restating(0, "still in Miami")))
	require.NoError(t, err)

	done := make(chan error)
	go func() {
		_, err := b.store.Revert(ctx, RevertParams{EventID: sup.EventID})
		done <- err
	}()
	waitForAdvisoryLockWaiter(t, b.testBundle)
	require.NoError(t, tx.Commit(ctx))
	require.ErrorIs(t, <-done, ErrRevertRefused, "the reinforcement committed meanwhile built on it")
	require.Equal(t, []string{miami}, b.current(t))
}

// A revert and the event it reverts are one record: a purge that erases either erases
// both, so that no reverted_by or reverts names an event that is gone, the audit counts
// neither, and the beliefs stay as the revert left them.
func TestPurgeErasesARevertWithTheEventItReverted(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ rationale, note, match string }{
		"the revert's note":        {rationale: "moved", note: "they only visited Miami, see ticket 7731", match: "ticket 7731"},
		"the reverted's rationale": {rationale: "moved, says ticket 5521", note: "they only visited Miami", match: "ticket 5521"},
		"neither: nothing erased":  {rationale: "moved", note: "they only visited Miami", match: "Zanzibar"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setupRevert(t)
			nycID := b.apply(t, extraction(b.scope, "2026-01-10", nil, fact(nyc, "location", ""))).BeliefID
			miamiFact := resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)
			miamiFact.Resolves.Rationale = c.rationale
			sup := b.apply(t, extraction(b.scope, "2026-03-01", []int64{nycID}, miamiFact))
			got := b.revert(t, sup.EventID, c.note)
			beliefs := mustAll(t, b.store, b.scope)

			b.clock.Advance(24 * time.Hour)
			_, err := b.store.Purge(ctx, Selection{Scope: b.scope, Match: c.match})
			require.NoError(t, err)
			require.Equal(t, beliefs, mustAll(t, b.store, b.scope), "the beliefs stay as the revert left them")
			require.Equal(t, []string{nyc}, b.current(t))

			evs, err := b.store.Events(ctx, b.scope, 0)
			require.NoError(t, err)
			audit, err := b.store.Audit(ctx, AuditQuery{Scope: b.scope})
			require.NoError(t, err)
			reverted := 0
			for _, o := range audit.Origins {
				reverted += o.Reverted
			}
			if c.match == "Zanzibar" {
				require.Equal(t, []int64{got.Revert.ID, sup.EventID}, eventIDs(evs))
				require.Equal(t, 1, audit.Reverts)
				require.Equal(t, 1, reverted)
				return
			}
			require.Empty(t, evs, "the revert and the event it reverted go together")
			require.Zero(t, audit.Reverts)
			require.Zero(t, reverted)
			_, err = b.store.Revert(ctx, RevertParams{EventID: sup.EventID})
			require.ErrorIs(t, err, ErrNotFound, "the reverted event is gone, not 'reverted already' by an event that is")
		})
	}
}

func eventIDs(evs []Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}
