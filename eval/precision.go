package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/credohq/credo/memory"
)

// Revision precision, read the way `beliefs audit` reads a scope: per origin, the
// revisions applied, the ones an operator would revert, and 1 - reverted / applied
// (memory.Precision). In a scenario, an operator would revert a supersede or a
// retraction that retired a belief the scenario expects current (current,
// side_by_side, reinforced) in favour of one that does not meet the same expectation:
// merging a duplicate into its twin is no mistake, nor is retiring a belief the
// scenario expects retired that way (Chicago, then Austin, then Chicago again: the
// first Chicago is superseded, the last is current). Restatements count as applied, as
// in the audit.

// revisionAudit is the precision of one scope's events against what e expects.
func revisionAudit(e Expect, sc *scorer, events []memory.Event) []memory.AuditOrigin {
	keep := slices.Concat(e.Current, e.Reinforced, slices.Concat(e.SideBySide...))
	wrong := func(ev memory.Event) bool {
		old, ok := sc.byID[ev.OldBeliefID]
		if ev.Action == memory.ActionReinforce || !ok {
			return false
		}
		var kept *memory.Belief
		if ev.NewBeliefID != nil {
			if b, ok := sc.byID[*ev.NewBeliefID]; ok {
				kept = &b
			}
		}
		retired := e.Superseded
		if ev.Action == memory.ActionRetract {
			retired = e.Retracted
		}
		for _, m := range retired {
			if m.Belief(old) && (m.Reason == "" || m.Reason == string(ev.Reason)) {
				return false
			}
		}
		for _, m := range keep {
			if m.Belief(old) && (kept == nil || !m.Belief(*kept)) {
				return true
			}
		}
		return false
	}
	var out []memory.AuditOrigin
	for _, ev := range events {
		if ev.Action == memory.ActionRevert {
			continue
		}
		o := memory.AuditOrigin{Origin: ev.Origin, Applied: 1}
		if wrong(ev) {
			o.Reverted = 1
		}
		out = append(out, o)
	}
	return memory.SumOrigins(out)
}

// revisionsOf sums the revision precision of results.
func revisionsOf(results []ScenarioResult) []memory.AuditOrigin {
	var rows []memory.AuditOrigin
	for _, r := range results {
		rows = append(rows, r.Revisions...)
	}
	return memory.SumOrigins(rows)
}

// writePrecision prints each run's revision precision per origin, one line a run.
func writePrecision(w io.Writer, runs []*RunResult) {
	fmt.Fprintln(w, "\nrevision precision (1 - reverted/applied, as `beliefs audit` reads it; reverted: what an operator would revert):")
	for _, run := range runs {
		parts := make([]string, 0, len(run.Total.Revisions))
		for _, o := range run.Total.Revisions {
			parts = append(parts, fmt.Sprintf("%s %s (%d applied, %d to revert)", o.Origin, rate(o.Precision), o.Applied, o.Reverted))
		}
		if len(parts) == 0 {
			parts = append(parts, "no revision")
		}
		fmt.Fprintf(w, "  learning %s: %s\n", onOff(run.Learning), strings.Join(parts, ", "))
	}
}
