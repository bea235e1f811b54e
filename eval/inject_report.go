package eval

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// InjectHeader are the columns of InjectReport.WriteTable.
var InjectHeader = []string{"KIND", "SET", "RATE", "GUARDS", "MADE", "HELD", "HELD%", "APPLIED", "REFUSED", "NONE",
	"SCENARIOS", "WRONG", "LOST", "CALLS/EP"}

// WriteJSON prints r as indented JSON.
func (r *InjectReport) WriteJSON(w io.Writer) error { return WriteJSON(w, r) }

// WriteTable prints r as an aligned table, a row per mistake, set and guard setting,
// after each set's baseline. With verbose, every mistake that was not held follows,
// with the scenarios each run left wrong.
func (r *InjectReport) WriteTable(w io.Writer, verbose bool) error {
	fmt.Fprintf(w, "gold model, embeddings %s (%s), scenarios %s, seed %d, second opinion %s\n", r.EmbedModel, r.EmbedProvider,
		r.Scenarios, r.Seed, r.Verifier)
	for _, s := range r.Sets {
		b := s.Baseline
		fmt.Fprintf(w, "%s: correct answers, guards on: %d scenarios, %d false holds, %d scenarios wrong, %s\n", s.Set, b.Scenarios,
			len(b.FalseHolds), len(b.Wrong), b.Calls)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(InjectHeader, "\t"))
	for _, kind := range r.kinds() {
		for _, s := range r.Sets {
			for _, k := range s.Kinds {
				if k.Kind != kind {
					continue
				}
				for _, g := range []GuardRun{k.On, k.Off} {
					fmt.Fprintln(tw, strings.Join([]string{string(k.Kind), s.Set, fmt.Sprintf("%.2f", k.Rate), onOff(g.Guards),
						strconv.Itoa(g.Made), strconv.Itoa(g.Held), percent(g.Held, g.Made), strconv.Itoa(g.Applied),
						strconv.Itoa(g.Refused), strconv.Itoa(g.None), strconv.Itoa(len(g.Scenarios)), strconv.Itoa(len(g.Wrong)),
						strconv.Itoa(len(g.Lost)), fmt.Sprintf("%.2f", g.Calls.PerEpisode)}, "\t"))
				}
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Sets {
		if wp := s.WordPassing; wp != nil {
			fmt.Fprintf(w, "%s: the kinds that pass word checks, guards on: %d made, %d held (%s), %d scenarios lost a belief\n",
				s.Set, wp.Made, wp.Held, percent(wp.Held, wp.Made), wp.Lost)
		}
	}
	for _, s := range r.Sets {
		for _, k := range s.Kinds {
			for _, g := range []GuardRun{k.On, k.Off} {
				if u := g.Unrelated; u != nil {
					fmt.Fprintf(w, "  %s, %s, guards %s: %d of the %d between unrelated beliefs (another attribute, no word in common), %d held (%s)\n",
						k.Kind, s.Set, onOff(g.Guards), u.Made, g.Made, u.Held, percent(u.Held, u.Made))
				}
				if g.Guards && len(g.Parts) > 0 {
					var parts []string
					for _, p := range slices.Sorted(maps.Keys(g.Parts)) {
						parts = append(parts, fmt.Sprintf("%s %d of %d held", p, g.Parts[p].Held, g.Parts[p].Made))
					}
					fmt.Fprintf(w, "  %s, %s, guards on: %s\n", k.Kind, s.Set, strings.Join(parts, ", "))
				}
				if g.Guards && len(g.Causes) > 0 {
					var causes []string
					for _, c := range slices.Sorted(maps.Keys(g.Causes)) {
						causes = append(causes, fmt.Sprintf("%s %d", c, g.Causes[c]))
					}
					fmt.Fprintf(w, "  %s, %s, guards on: held as %s\n", k.Kind, s.Set, strings.Join(causes, ", "))
				}
			}
		}
	}
	for _, s := range r.Sets {
		for _, h := range s.Baseline.FalseHolds {
			fmt.Fprintf(w, "  false hold: %s: %s: %s (%s) of %q: %s\n", s.Set, h.Scenario, h.Cause, h.Action, h.Target, h.Detail)
		}
	}
	if !verbose {
		return nil
	}
	for _, s := range r.Sets {
		for _, n := range s.Baseline.Wrong {
			fmt.Fprintf(w, "  correct answers left %s/%s wrong\n", s.Set, n)
		}
	}
	for _, s := range r.Sets {
		for _, k := range s.Kinds {
			for _, g := range []GuardRun{k.On, k.Off} {
				fmt.Fprintf(w, "\n%s, %s, guards %s:\n", k.Kind, s.Set, onOff(g.Guards))
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
	}
	return nil
}

// kinds are the kinds the report measured, in report order.
func (r *InjectReport) kinds() []InjectKind {
	var out []InjectKind
	for _, s := range r.Sets {
		for _, k := range s.Kinds {
			if !slices.Contains(out, k.Kind) {
				out = append(out, k.Kind)
			}
		}
	}
	return out
}

// String is c as a report line says it.
func (c Calls) String() string {
	return fmt.Sprintf("%.2f chat calls per episode (%.2f without the second opinion's %d)", c.PerEpisode, c.WithoutVerification,
		c.Verification)
}

// percent is n of d as a whole percentage, "-" when d is 0.
func percent(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d))
}
