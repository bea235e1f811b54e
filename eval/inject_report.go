package eval

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// InjectHeader are the columns of InjectReport.WriteTable.
var InjectHeader = []string{"KIND", "RATE", "GUARDS", "MADE", "HELD", "HELD%", "APPLIED", "REFUSED", "NONE",
	"SCENARIOS", "WRONG", "LOST"}

// WriteJSON prints r as indented JSON.
func (r *InjectReport) WriteJSON(w io.Writer) error { return WriteJSON(w, r) }

// WriteTable prints r as an aligned table, a row per mistake and guard setting, after
// the baseline's false holds. With verbose, every mistake that was not held follows,
// with the scenarios each run left wrong.
func (r *InjectReport) WriteTable(w io.Writer, verbose bool) error {
	b := r.Baseline
	fmt.Fprintf(w, "gold model, embeddings %s (%s), scenarios %s, seed %d\n", r.EmbedModel, r.EmbedProvider, r.Scenarios, r.Seed)
	fmt.Fprintf(w, "correct answers, guards on: %d scenarios, %d false holds, %d scenarios wrong\n\n", b.Scenarios, len(b.FalseHolds), len(b.Wrong))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(InjectHeader, "\t"))
	for _, k := range r.Kinds {
		for _, g := range []GuardRun{k.On, k.Off} {
			fmt.Fprintln(tw, strings.Join([]string{string(k.Kind), fmt.Sprintf("%.2f", k.Rate), onOff(g.Guards),
				strconv.Itoa(g.Made), strconv.Itoa(g.Held), percent(g.Held, g.Made), strconv.Itoa(g.Applied),
				strconv.Itoa(g.Refused), strconv.Itoa(g.None), strconv.Itoa(len(g.Scenarios)), strconv.Itoa(len(g.Wrong)),
				strconv.Itoa(len(g.Lost))}, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, k := range r.Kinds {
		for _, g := range []GuardRun{k.On, k.Off} {
			if u := g.Unrelated; u != nil {
				fmt.Fprintf(w, "  %s, guards %s: %d of the %d between unrelated beliefs (another attribute, no word in common), %d held (%s)\n",
					k.Kind, onOff(g.Guards), u.Made, g.Made, u.Held, percent(u.Held, u.Made))
			}
		}
	}
	for _, h := range b.FalseHolds {
		fmt.Fprintf(w, "  false hold: %s: %s (%s) of %q: %s\n", h.Scenario, h.Cause, h.Action, h.Target, h.Detail)
	}
	if !verbose {
		return nil
	}
	for _, s := range b.Wrong {
		fmt.Fprintf(w, "  correct answers left %s wrong\n", s)
	}
	for _, k := range r.Kinds {
		for _, g := range []GuardRun{k.On, k.Off} {
			fmt.Fprintf(w, "\n%s, guards %s:\n", k.Kind, onOff(g.Guards))
			for _, m := range g.Mistakes {
				if m.Outcome == OutcomeHeld {
					continue
				}
				cause := ""
				if m.Cause != "" {
					cause = " (" + string(m.Cause) + ")"
				}
				fmt.Fprintf(w, "  %s/%s: %s %s of %q: %s%s\n", m.Scenario, m.Transcript, m.Action, m.Reason, m.Target, m.Outcome, cause)
			}
			if len(g.Wrong) > 0 {
				fmt.Fprintf(w, "  wrong: %s\n", strings.Join(g.Wrong, ", "))
			}
		}
	}
	return nil
}

// percent is n of d as a whole percentage, "-" when d is 0.
func percent(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d))
}
