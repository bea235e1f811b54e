package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/credohq/credo/memory"
)

// PerturbConfig configures RunPerturb: the pipeline of Config, the perturbations, and how
// the gold model answers the second opinion.
type PerturbConfig struct {
	Config
	Perturbations []Perturbation
	// Seed draws which synonym or wording a perturbation takes.
	Seed     uint64
	Verifier Verifier
}

// PerturbReport is what eval --perturb prints: a part per scenario set.
type PerturbReport struct {
	EmbedProvider string       `json:"embed_provider"`
	EmbedModel    string       `json:"embed_model"`
	Scenarios     string       `json:"scenarios"`
	Seed          uint64       `json:"seed"`
	Verifier      Verifier     `json:"verifier"`
	Sets          []PerturbSet `json:"sets"`
}

// PerturbSet is what eval --perturb measured on one scenario set: a result per
// perturbation, then, with more than one, all of them together.
type PerturbSet struct {
	Set       string          `json:"set"`
	Scenarios int             `json:"scenarios"`
	Results   []PerturbResult `json:"results"`
}

// PerturbResult is one perturbation (or all together, Name "all") with the guards on
// and off.
type PerturbResult struct {
	Name          string         `json:"name"`
	Perturbations []Perturbation `json:"perturbations"`
	On            PerturbRun     `json:"guards_on"`
	Off           PerturbRun     `json:"guards_off"`
}

// PerturbRun is one run of correct answers, perturbed.
type PerturbRun struct {
	Guards bool `json:"guards"`
	// Revisions counts the correct destructive directives given, Perturbed those of them
	// a perturbation applied to.
	Revisions int `json:"revisions"`
	Perturbed int `json:"perturbed"`
	// FalseHolds are the run's review items of a guard's cause: every one is a correct
	// directive held. PerturbedHeld counts those on a perturbed directive.
	FalseHolds    []Hold `json:"false_holds"`
	PerturbedHeld int    `json:"perturbed_held"`
	// Causes count the false holds by cause.
	Causes map[memory.Cause]int `json:"causes,omitempty"`
	// Wrong are the scenarios whose current memory fails an expectation; Lost those
	// where a belief expected current was retired.
	Wrong     []string   `json:"wrong"`
	Lost      []string   `json:"lost"`
	Stats     GoldStats  `json:"gold"`
	Calls     Calls      `json:"calls"`
	Directive []Revision `json:"revisions_given"`
	Seconds   float64    `json:"seconds"`
}

// RunPerturb runs each set with the gold model's correct answers given each
// perturbation in turn, then all of them together, with the guards on and off, and
// counts the correct revisions the guards hold.
func RunPerturb(ctx context.Context, sets []Set, cfg PerturbConfig) (*PerturbReport, error) {
	if len(cfg.Perturbations) == 0 {
		return nil, errors.New("eval: no perturbation")
	}
	v, err := ParseVerifier(string(cfg.Verifier))
	if err != nil {
		return nil, err
	}
	runs := make([][]Perturbation, 0, len(cfg.Perturbations)+1)
	for _, p := range cfg.Perturbations {
		runs = append(runs, []Perturbation{p})
	}
	if len(cfg.Perturbations) > 1 {
		runs = append(runs, cfg.Perturbations)
	}
	rep := &PerturbReport{Seed: cfg.Seed, Verifier: v}
	for _, set := range sets {
		ps := PerturbSet{Set: set.Name, Scenarios: len(set.Scenarios)}
		for _, kinds := range runs {
			name := perturbedName(kinds)
			pr := PerturbResult{Name: name, Perturbations: kinds}
			for _, guards := range []bool{true, false} {
				r, err := goldRun(ctx, set, cfg.Config, GoldOptions{Seed: cfg.Seed, Verifier: v, Perturb: kinds}, guards,
					set.Name+": perturbed "+name)
				if err != nil {
					return nil, err
				}
				run := r.perturbRun(guards)
				if guards {
					pr.On = run
				} else {
					pr.Off = run
				}
			}
			ps.Results = append(ps.Results, pr)
		}
		rep.Sets = append(rep.Sets, ps)
	}
	return rep, nil
}

// perturbRun sums one perturbed run.
func (r *injected) perturbRun(guards bool) PerturbRun {
	p := PerturbRun{Guards: guards, Revisions: len(r.revisions), FalseHolds: append([]Hold{}, r.holds...),
		Wrong: append([]string{}, r.wrong...), Lost: append([]string{}, r.lost...), Stats: r.stats, Calls: r.calls,
		Directive: append([]Revision{}, r.revisions...), Seconds: r.res.Seconds}
	for _, rev := range r.revisions {
		if len(rev.Perturbations) > 0 {
			p.Perturbed++
		}
	}
	for _, h := range r.holds {
		if p.Causes == nil {
			p.Causes = map[memory.Cause]int{}
		}
		p.Causes[h.Cause]++
		for _, rev := range r.revisions {
			if rev.Scenario == h.Scenario && rev.Action == h.Action && oneSpace(rev.Target) == oneSpace(h.Target) &&
				len(rev.Perturbations) > 0 {
				p.PerturbedHeld++
				break
			}
		}
	}
	return p
}

// PerturbHeader are the columns of PerturbReport.WriteTable.
var PerturbHeader = []string{"PERTURBATION", "SET", "GUARDS", "REVISIONS", "PERTURBED", "FALSE_HOLDS", "HELD%", "OF_PERTURBED",
	"WRONG", "LOST", "CALLS/EP"}

// WriteJSON prints r as indented JSON.
func (r *PerturbReport) WriteJSON(w io.Writer) error { return WriteJSON(w, r) }

// WriteTable prints r as an aligned table, a row per perturbation, set and guard
// setting, and under it every false hold of the guards on.
func (r *PerturbReport) WriteTable(w io.Writer, verbose bool) error {
	fmt.Fprintf(w, "gold model, correct answers perturbed, embeddings %s (%s), scenarios %s, seed %d, second opinion %s\n\n",
		r.EmbedModel, r.EmbedProvider, r.Scenarios, r.Seed, r.Verifier)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(PerturbHeader, "\t"))
	var names []string
	for _, s := range r.Sets {
		for _, res := range s.Results {
			if !slices.Contains(names, res.Name) {
				names = append(names, res.Name)
			}
		}
	}
	for _, name := range names {
		for _, s := range r.Sets {
			for _, res := range s.Results {
				if res.Name != name {
					continue
				}
				for _, p := range []PerturbRun{res.On, res.Off} {
					fmt.Fprintln(tw, strings.Join([]string{res.Name, s.Set, onOff(p.Guards), strconv.Itoa(p.Revisions),
						strconv.Itoa(p.Perturbed), strconv.Itoa(len(p.FalseHolds)), percent1(len(p.FalseHolds), p.Revisions),
						strconv.Itoa(p.PerturbedHeld), strconv.Itoa(len(p.Wrong)), strconv.Itoa(len(p.Lost)),
						fmt.Sprintf("%.2f", p.Calls.PerEpisode)}, "\t"))
				}
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Sets {
		for _, res := range s.Results {
			for _, h := range res.On.FalseHolds {
				fmt.Fprintf(w, "  false hold (%s, %s): %s: %s (%s) of %q by %q: %s\n", res.Name, s.Set, h.Scenario, h.Cause, h.Action,
					h.Target, h.Statement, h.Detail)
			}
		}
	}
	if !verbose {
		return nil
	}
	for _, s := range r.Sets {
		for _, res := range s.Results {
			fmt.Fprintf(w, "\n%s, %s:\n", res.Name, s.Set)
			for _, rev := range res.On.Directive {
				if len(rev.Perturbations) == 0 {
					continue
				}
				fmt.Fprintf(w, "  %s/%s: %s of %q: %q (%s, subject %q), quote %q\n", rev.Scenario, rev.Transcript, rev.Action, rev.Target,
					rev.Statement, rev.Attribute, rev.Subject, rev.Quote)
			}
			if len(res.On.Wrong) > 0 {
				fmt.Fprintf(w, "  wrong, guards on: %s\n", strings.Join(res.On.Wrong, ", "))
			}
		}
	}
	return nil
}

// percent1 is n of d as a percentage with one decimal, "-" when d is 0: false holds are
// counted against a bound of 1%.
func percent1(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}
