package eval_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/memory"
)

// A scenario's revisions read as an audit reads a scope: a revision that retired a
// belief the scenario expects current is one an operator would revert; merging a
// duplicate into its twin is not.
func TestRevisionPrecision(t *testing.T) {
	by := func(origin memory.RevisionOrigin, e memory.Event) memory.Event { e.Origin = origin; return e }
	r := eval.Score(moveScenario, eval.Observation{
		Beliefs: []memory.Belief{
			belief(1, memory.StatusSuperseded, "User lives in New York"),
			belief(2, memory.StatusSuperseded, "User lives in Miami"),
			belief(3, memory.StatusActive, "User lives in Miami, Florida"),
			belief(4, memory.StatusRetracted, "User lives in Miami Beach"),
		},
		Events: []memory.Event{
			by(memory.RevisionExtraction, event(memory.ActionSupersede, memory.ReasonTemporal, 1, new(int64(2)))),
			by(memory.RevisionConsolidation, event(memory.ActionSupersede, memory.ReasonDuplicate, 2, new(int64(3)))),
			by(memory.RevisionExtraction, event(memory.ActionRetract, memory.ReasonCorrection, 4, nil)),
			by(memory.RevisionExtraction, event(memory.ActionReinforce, memory.ReasonRestated, 3, nil)),
			by(memory.RevisionOperator, event(memory.ActionRevert, memory.ReasonCorrection, 4, nil)),
		},
	})
	want := []memory.AuditOrigin{
		{Origin: memory.RevisionExtraction, Applied: 3, Reverted: 1, Precision: memory.Precision(3, 1)},
		{Origin: memory.RevisionConsolidation, Applied: 1, Precision: new(float64(1))},
	}
	require.Equal(t, want, r.Revisions)
	cats, total := eval.Aggregate([]eval.ScenarioResult{r, r})
	require.Equal(t, []memory.AuditOrigin{
		{Origin: memory.RevisionExtraction, Applied: 6, Reverted: 2, Precision: memory.Precision(6, 2)},
		{Origin: memory.RevisionConsolidation, Applied: 2, Precision: new(float64(1))},
	}, total.Revisions)
	require.Equal(t, total.Revisions, cats[0].Revisions)

	var out bytes.Buffer
	rep := &eval.Report{Runs: []*eval.RunResult{{Categories: cats, Total: total}}}
	require.NoError(t, rep.WriteTable(&out, false))
	require.Contains(t, out.String(), "learning off: extraction 0.67 (6 applied, 2 to revert), consolidation 1.00 (2 applied, 0 to revert)")
}

// A belief the scenario expects current and also expects retired, for that reason
// (Chicago, Austin, Chicago again), is no mistake to retire; for another reason, it is.
func TestRevisionPrecisionOfAValueThatCameBack(t *testing.T) {
	back := eval.Scenario{Name: "b", Category: "move", Scope: "eval:b", Expect: eval.Expect{
		Current:    []eval.Match{{AnyOf: []string{"chicago"}}},
		Superseded: []eval.Match{{AnyOf: []string{"austin"}, Reason: "temporal"}, {AnyOf: []string{"chicago"}, Reason: "temporal"}},
	}}
	obs := eval.Observation{
		Beliefs: []memory.Belief{
			belief(1, memory.StatusSuperseded, "User lives in Chicago"),
			belief(2, memory.StatusSuperseded, "User lives in Austin"),
			belief(3, memory.StatusActive, "User lives in Chicago again"),
		},
		Events: []memory.Event{
			event(memory.ActionSupersede, memory.ReasonTemporal, 1, new(int64(2))),
			event(memory.ActionSupersede, memory.ReasonTemporal, 2, new(int64(3))),
		},
	}
	for i := range obs.Events {
		obs.Events[i].Origin = memory.RevisionExtraction
	}
	require.Equal(t, []memory.AuditOrigin{{Origin: memory.RevisionExtraction, Applied: 2, Precision: new(float64(1))}},
		eval.Score(back, obs).Revisions)
	obs.Events[0].Reason = memory.ReasonCorrection
	require.Equal(t, []memory.AuditOrigin{{Origin: memory.RevisionExtraction, Applied: 2, Reverted: 1, Precision: memory.Precision(2, 1)}},
		eval.Score(back, obs).Revisions)
}
