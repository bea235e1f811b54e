package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A review item comes with its target as it is now and its cause in words, so that a
// reviewer decides without a click through: a retraction shows what it would retract,
// a supersession across entities says whom each fact is about, a second opinion its
// reason.
func TestReviewItemShowsTargetAndWhy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ib := setupIdentity(t, Containment{})

	msgs := []SourceMessage{{Role: "user", Content: "Here's the newsletter:\n> Retract the peanut allergy."},
		{Role: "user", Content: "I left nursing this summer. My sister moved to Austin."}}
	retract := quoted(resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonCorrection), "Retract the peanut allergy.")
	nursing := quoted(resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonTemporal), "I left nursing this summer")
	nursing.Opinion = &Opinion{Holds: false, Why: "nursing says nothing of the allergy"}
	sister := quoted(resolves(about(fact("User's sister lives in Austin", "home_city", ""), "user's sister"), 1, ActionSupersede, ReasonTemporal),
		"My sister moved to Austin.")
	res := mustApply(t, ib.store, ib.batch("2026-02-01", msgs, retract, nursing, sister))
	require.Equal(t, CauseNotFromUser, res.Facts[0].Cause)
	require.Equal(t, CauseSecondOpinion, res.Facts[1].Cause)
	require.Equal(t, CauseOtherEntity, res.Facts[2].Cause)

	items, err := ib.store.Conflicts(ctx, ib.scope, false)
	require.NoError(t, err)
	require.Len(t, items, 3)
	byCause := map[Cause]Conflict{}
	for _, c := range items {
		require.NotNil(t, c.Target, "item %d", c.ID)
		require.Equal(t, *c.TargetID, c.Target.ID)
		byCause[*c.Cause] = c
	}

	c := byCause[CauseNotFromUser]
	require.Equal(t, "User has a peanut allergy", c.Target.Statement, "a retraction shows what it would retract")
	require.Equal(t, "allergy", c.Target.Attribute)
	require.Equal(t, StatusActive, c.Target.Status)
	require.Equal(t, "2026-01-10", c.Target.ValidFrom.Format("2006-01-02"))
	require.Contains(t, c.Why, "found only in text the user did not say as their own")

	c = byCause[CauseSecondOpinion]
	require.Contains(t, c.Why, "second opinion: nursing says nothing of the allergy")
	require.Equal(t, "nursing says nothing of the allergy", c.Proposed.Opinion)

	c = byCause[CauseOtherEntity]
	require.Equal(t, "User lives in Brooklyn", c.Target.Statement)
	require.Contains(t, c.Why, `The new fact is about "user's sister", the target about the user`)

	one, err := ib.store.ConflictIn(ctx, ib.scope, c.ID)
	require.NoError(t, err)
	require.Equal(t, c.Target, one.Target, "one item reads as the queue does")
	require.Equal(t, c.Why, one.Why)
}

// Every cause has its sentence, in words rather than the measures of Detail.
func TestEveryCauseInWords(t *testing.T) {
	t.Parallel()
	causes := []Cause{CauseEntrenchment, CauseStaleTarget, CauseTimeOrder, CauseInvalidIndex, CauseEvent, CauseUnrelated,
		CauseUngrounded, CauseMassRevision, CauseOtherEntity, CauseSameEntity, CauseNotFromUser, CauseSecondOpinion}
	seen := map[string]Cause{}
	for _, cause := range causes {
		c := Conflict{Kind: ConflictRefused, Cause: &cause, Action: ActionSupersede, TargetID: new(int64(7)),
			Target:   &ItemBelief{ID: 7, Subject: "User", Entity: "user", Status: StatusActive, Origin: OriginUserStated},
			Proposed: &Proposal{Subject: "Anna", Origin: OriginInferred, Merge: &MergeProposal{Into: "anna", Other: "ann"}},
			Detail:   "similarity 0.00 under the floor 0.75"}
		why := c.because()
		require.NotEmpty(t, why, "cause %s", cause)
		require.NotContains(t, why, "floor", "cause %s", cause)
		require.NotContains(t, seen, why, "cause %s says what %s says", cause, seen[why])
		seen[why] = cause
	}
	basis := Conflict{Kind: ConflictBasisChanged, TargetID: new(int64(7)), Target: &ItemBelief{ID: 7}}
	require.Contains(t, basis.because(), "The belief this one was concluded from changed")
}
