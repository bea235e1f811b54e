package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func event(statement, validFrom string) Fact {
	f := fact(statement, "trip", validFrom)
	f.Kind = KindEvent
	return f
}

// A later event never replaces an earlier one: both happened. A correction may (it was
// remembered wrong), a retraction may (it never happened), and an operator may.
func TestEvents(t *testing.T) {
	t.Parallel()
	const paris, rome = "User visited Paris", "User visited Rome"
	for _, tc := range []struct {
		name       string
		origin     RevisionOrigin
		action     Action
		reason     Reason
		statement  string
		want       OutcomeKind
		wantActive []string
		wantCause  Cause // the refusal recorded, if any
	}{
		{"temporal supersede is refused, the new event stored", RevisionExtraction, ActionSupersede, ReasonTemporal, rome,
			OutcomeConflict, []string{paris, rome}, CauseEvent},
		{"consolidation's temporal supersede is refused too", RevisionConsolidation, ActionSupersede, ReasonTemporal, rome,
			OutcomeConflict, []string{paris, rome}, CauseEvent},
		{"a correction supersedes", RevisionExtraction, ActionSupersede, ReasonCorrection, rome,
			OutcomeSuperseded, []string{rome}, ""},
		{"a retraction retracts", RevisionExtraction, ActionRetract, ReasonCorrection, "",
			OutcomeRetracted, nil, ""},
		{"an operator may supersede", RevisionOperator, ActionSupersede, ReasonTemporal, rome,
			OutcomeSuperseded, []string{rome}, ""},
		{"said again, it is reinforced", RevisionExtraction, ActionSupersede, ReasonTemporal, paris,
			OutcomeReinforced, []string{paris}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, _ := setup(t)
			id := mustApply(t, store, extraction("u", "2026-03-01", nil, event(paris, ""))).Facts[0].BeliefID

			f := event(tc.statement, "")
			if tc.statement == "" {
				f = Fact{Confidence: 0.9, Origin: OriginUserStated}
			}
			b := extraction("u", "2026-04-01", []int64{id}, resolves(f, 0, tc.action, tc.reason))
			b.Origin = tc.origin
			out := mustApply(t, store, b).Facts[0]
			require.Equal(t, tc.want, out.Kind, out.Detail)

			current, err := store.Current(ctx, "u")
			require.NoError(t, err)
			require.ElementsMatch(t, tc.wantActive, statementsOf(current))

			conflicts, err := store.Conflicts(ctx, "u", false)
			require.NoError(t, err)
			if tc.wantCause == "" {
				require.Empty(t, conflicts)
				return
			}
			require.Len(t, conflicts, 1)
			c := conflicts[0]
			require.Equal(t, ConflictRefused, c.Kind)
			require.Equal(t, tc.wantCause, *c.Cause)
			require.Equal(t, id, *c.TargetID)
			require.Equal(t, out.BeliefID, *c.BeliefID, "the item names the event stored beside")
			require.Equal(t, rome, c.Statement)
		})
	}
}

// Consolidation's refused supersession of an event names the belief that was to
// replace it, so that an operator can carry it out.
func TestEventsConsolidationNamesTheReplacement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	res := mustApply(t, store, extraction("u", "2026-03-01", nil, event("User visited Paris", "2026-02-01"), event("User visited Rome", "")))
	a, b := res.Facts[0].BeliefID, res.Facts[1].BeliefID
	out := mustApply(t, store, &Batch{Scope: "u", Origin: RevisionConsolidation, Candidates: []int64{a, b},
		Resolutions: []Resolution{{Index: 0, ReplacedBy: new(1), Action: ActionSupersede, Reason: ReasonTemporal}}})
	require.Equal(t, OutcomeConflict, out.Resolutions[0].Kind)
	conflicts, err := store.Conflicts(ctx, "u", false)
	require.NoError(t, err)
	require.Len(t, conflicts, 1)
	require.Equal(t, b, *conflicts[0].BeliefID)
	require.Equal(t, a, *conflicts[0].TargetID)

	// A duplicate is not a later event: consolidation may merge it.
	dup := mustApply(t, store, extraction("u", "2026-03-02", nil, event("User went to Paris", "2026-02-01"))).Facts[0].BeliefID
	out = mustApply(t, store, &Batch{Scope: "u", Origin: RevisionConsolidation, Candidates: []int64{dup, a},
		Resolutions: []Resolution{{Index: 0, ReplacedBy: new(1), Action: ActionSupersede, Reason: ReasonDuplicate}}})
	require.Equal(t, OutcomeSuperseded, out.Resolutions[0].Kind)
}
