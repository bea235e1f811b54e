package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAuditCountsRevisionsRevertsCorrectionsAndDecisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRevert(t)
	nycID := b.apply(t, extraction("u", "2026-01-10", nil, fact(nyc, "location", ""))).BeliefID
	wrong := b.apply(t, extraction("u", "2026-03-01", []int64{nycID}, resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
	b.revert(t, wrong.EventID, "they only visited")
	since := b.clock.Now().Add(time.Second)

	py := b.apply(t, extraction("u", "2026-02-01", nil, fact("User writes Python", "language", ""))).BeliefID
	rust := b.apply(t, extraction("u", "2026-03-01", []int64{py}, resolves(fact("User writes Rust", "language", ""), 0, ActionSupersede, ReasonCorrection)))
	// An operator corrects what the extraction wrote.
	b.apply(t, &Batch{Scope: "u", Origin: RevisionOperator, Candidates: []int64{rust.BeliefID},
		Facts: []Fact{resolves(fact("User writes Go", "language", ""), 0, ActionSupersede, ReasonCorrection)}})
	guess := fact("User likes tea", "drink", "")
	guess.Origin = OriginInferred
	tea := b.apply(t, extraction("u", "2026-02-01", nil, guess)).BeliefID
	b.apply(t, &Batch{Scope: "u", Origin: RevisionConsolidation, Candidates: []int64{tea},
		Resolutions: []Resolution{{Index: 0, Action: ActionRetract, Reason: ReasonTemporal}}})
	// Two refusals: one dismissed, one open.
	auth := fact("Plan is Pro", "plan", "2026-01-01")
	auth.Origin = OriginAuthoritative
	plan := b.apply(t, &Batch{Scope: "u", Origin: RevisionOperator, Facts: []Fact{auth}}).BeliefID
	refused := b.apply(t, extraction("u", "2026-04-01", []int64{plan}, resolves(fact("Plan is Free", "plan", ""), 0, ActionSupersede, ReasonTemporal)))
	require.Equal(t, OutcomeConflict, refused.Kind)
	b.clock.Advance(time.Hour)
	_, err := b.store.Decide(ctx, Decision{ID: refused.ConflictID, Verdict: VerdictDismiss})
	require.NoError(t, err)
	require.Equal(t, OutcomeConflict, b.apply(t, extraction("u", "2026-04-02", []int64{plan},
		resolves(fact("Plan is Team", "plan", ""), 0, ActionSupersede, ReasonTemporal))).Kind)
	// Another scope's revisions are not this one's.
	b.apply(t, extraction("w", "2026-01-01", nil, fact(nyc, "location", "")))

	a, err := b.store.Audit(ctx, AuditQuery{Scope: "u"})
	require.NoError(t, err)
	require.Equal(t, "u", *a.Scope)
	require.Nil(t, a.ScopePrefix)
	require.Equal(t, []AuditRevisions{
		{Origin: RevisionExtraction, Action: ActionSupersede, Reason: ReasonCorrection, Applied: 1, Corrected: 1},
		{Origin: RevisionExtraction, Action: ActionSupersede, Reason: ReasonTemporal, Applied: 1, Reverted: 1},
		{Origin: RevisionConsolidation, Action: ActionRetract, Reason: ReasonTemporal, Applied: 1},
		{Origin: RevisionOperator, Action: ActionSupersede, Reason: ReasonCorrection, Applied: 1},
	}, a.Revisions)
	require.Equal(t, []AuditOrigin{
		{Origin: RevisionExtraction, Applied: 2, Reverted: 1, Corrected: 1, Precision: new(0.5)},
		{Origin: RevisionConsolidation, Applied: 1, Precision: new(1.0)},
		{Origin: RevisionOperator, Applied: 1, Precision: new(1.0)},
	}, a.Origins)
	require.Equal(t, 1, a.Reverts)
	require.Equal(t, []AuditRefusals{{Origin: RevisionExtraction, Cause: CauseEntrenchment, Refused: 2, Open: 1, Dismissed: 1}}, a.Refusals)

	// Since leaves out what came before: the reverted revision and its revert.
	a, err = b.store.Audit(ctx, AuditQuery{ScopePrefix: "u", Since: &since})
	require.NoError(t, err)
	require.Equal(t, "u", *a.ScopePrefix)
	require.Equal(t, 0, a.Reverts)
	require.Equal(t, AuditOrigin{Origin: RevisionExtraction, Applied: 1, Corrected: 1, Precision: new(1.0)}, a.Origins[0])

	a, err = b.store.Audit(ctx, AuditQuery{Scope: "nobody"})
	require.NoError(t, err)
	require.Empty(t, a.Revisions, "a scope without revisions audits as zeros")
	require.Empty(t, a.Origins)
	_, err = b.store.Audit(ctx, AuditQuery{Scope: "u", ScopePrefix: "u"})
	require.ErrorIs(t, err, ErrInvalid)

	byOrigin, err := b.store.RevertedByOrigin(ctx)
	require.NoError(t, err)
	require.Equal(t, map[RevisionOrigin]int{RevisionExtraction: 1}, byOrigin)
}
