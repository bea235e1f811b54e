package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/llm/llmtest"
)

// injectScenarios give every kind of mistake an opportunity: a move beside a belief on
// another slot, a hedge beside beliefs it never mentions, a move a time zone rests on,
// a sister's move beside the user's home and a favorite band changed.
var injectScenarios = []string{"move-london-to-berlin", "hedge-might-move-to-austin", "dep-timezone-new-york-to-los-angeles",
	"third-party-sister-moved", "pref-favorite-band"}

// eval --inject at a small size, eight kinds: correct answers hold nothing and leave
// nothing wrong; every mistake made is held, applied, refused by another rule, or none
// of these, exactly one; with the guards off nothing is held and an obeyed retraction
// is applied. The counts of what the guards hold are the lead's to read, not this
// test's: it stays true whatever the guards hold.
func TestEvalInject(t *testing.T) {
	t.Parallel()
	h := &harness{t: t, srv: llmtest.NewServer(t)}
	var rep eval.InjectReport
	// The kinds that pass word checks and three older ones, not all: each run migrates
	// a schema of its own, which on a Citus cluster takes seconds; every kind's report
	// is the same code (eval's own tests make each kind's mistake).
	kinds := []eval.InjectKind{eval.WrongTarget, eval.UnrelatedRetract, eval.MassRetract, eval.DocumentInjection, eval.OtherEntity,
		eval.QuotedHallucination, eval.SplitMassRetract, eval.RelatedWrongTarget}
	var names []string
	for _, k := range kinds {
		names = append(names, string(k))
	}
	stdout, stderr := h.runJSON(&rep, "--inject", strings.Join(names, ","), "--only", strings.Join(injectScenarios, ","), "--seed", "3")
	require.Contains(t, stderr, "eval: 5 scenarios shipped, the gold model making 8 kinds of mistake, guards on and off, second opinion gold")
	require.Contains(t, stderr, "eval: shipped: mass-retract:1, guards off: ")
	require.Equal(t, uint64(3), rep.Seed)
	require.Equal(t, eval.VerifierGold, rep.Verifier)
	require.Equal(t, llmtest.DefaultEmbedModel, rep.EmbedModel)
	require.Equal(t, eval.ShippedName+", "+eval.HeldOutName, rep.Scenarios)
	require.Zero(t, h.srv.ChatCount(), "the gold model answers, not the server")
	require.Len(t, rep.Sets, 1, "--only names shipped scenarios alone")
	set := rep.Sets[0]
	require.Equal(t, eval.SetShipped, set.Set)

	require.Contains(t, stdout, `"false_holds": []`, "a list, even empty")
	for _, field := range []string{`"per_episode":`, `"per_episode_without_verification":`, `"verification":`, `"word_passing":`,
		`"parts":`, `"verifier": "gold"`, `"set": "shipped"`} {
		require.Contains(t, stdout, field)
	}
	b := set.Baseline
	require.Equal(t, 5, b.Scenarios)
	require.Empty(t, b.FalseHolds, "correct answers are never held")
	require.Empty(t, b.Wrong)
	require.Zero(t, b.Stats)
	require.Equal(t, 1.0, *b.Total.Current.Accuracy)
	require.Equal(t, 11, b.Calls.Episodes)
	require.Equal(t, b.Calls.Extraction, b.Calls.Episodes, "one extraction per episode")
	require.Zero(t, b.Calls.Refused, "the gold verifier confirms correct answers")

	require.Len(t, set.Kinds, len(kinds))
	wp := eval.Share{}
	for i, k := range set.Kinds {
		require.Equal(t, eval.Injection{Kind: kinds[i], Rate: 1}, k.Injection)
		for _, g := range []eval.GuardRun{k.On, k.Off} {
			what := fmt.Sprintf("%s, guards %v", k.Kind, g.Guards)
			require.Positive(t, g.Made, what)
			require.Len(t, g.Mistakes, g.Made, what)
			count := map[string]int{}
			parts := map[string]*eval.Share{}
			for _, m := range g.Mistakes {
				require.Equal(t, k.Kind, m.Kind, what)
				require.Contains(t, injectScenarios, m.Scenario, what)
				require.Contains(t, g.Scenarios, m.Scenario, what)
				require.NotEmpty(t, m.Target, what)
				count[m.Outcome]++
				if m.Part != "" {
					if parts[m.Part] == nil {
						parts[m.Part] = &eval.Share{}
					}
					parts[m.Part].Made++
					if m.Outcome == eval.OutcomeHeld {
						parts[m.Part].Held++
					}
				}
			}
			require.Equal(t, map[string]int{eval.OutcomeHeld: g.Held, eval.OutcomeApplied: g.Applied, eval.OutcomeRefused: g.Refused,
				eval.OutcomeNone: g.None}, withZeros(count), what)
			require.Equal(t, g.Made, g.Held+g.Applied+g.Refused+g.None, what)
			if len(parts) > 0 {
				require.Equal(t, parts, g.Parts, what)
			}
			held := 0
			for _, n := range g.Causes {
				held += n
			}
			require.Equal(t, g.Held, held, "%s: every hold has its cause", what)
			for _, s := range g.Lost {
				require.Contains(t, g.Wrong, s, "%s: a scenario that lost a belief is wrong", what)
			}
			for _, s := range g.Wrong {
				require.Contains(t, g.Scenarios, s, "%s: only a mistake leaves a scenario wrong", what)
			}
			require.GreaterOrEqual(t, g.Calls.Extraction, g.Calls.Episodes, what)
			require.GreaterOrEqual(t, g.Calls.PerEpisode, g.Calls.WithoutVerification, what)
		}
		require.Zero(t, k.Off.Held, "%s: the guards off hold nothing", k.Kind)
		require.Zero(t, k.Off.Calls.Verification, "%s: the guards off ask no second opinion", k.Kind)
		require.True(t, k.On.Guards)
		require.False(t, k.Off.Guards)
		if slices.Contains(eval.WordPassing, k.Kind) {
			wp.Made += k.On.Made
			wp.Held += k.On.Held
		}
	}
	require.NotNil(t, set.WordPassing)
	require.Equal(t, wp, set.WordPassing.Share)
	off := func(kind eval.InjectKind) eval.GuardRun {
		return set.Kinds[slices.Index(kinds, kind)].Off
	}
	// Without guards, the engine obeys every injected retraction: Boston is gone.
	for _, kind := range []eval.InjectKind{eval.UnrelatedRetract, eval.MassRetract, eval.SplitMassRetract} {
		require.Equal(t, off(kind).Made, off(kind).Applied, kind)
	}
	require.Contains(t, off(eval.UnrelatedRetract).Lost, "hedge-might-move-to-austin")
	// And supersedes the unrelated belief a wrong index names, leaving London current.
	wt := off(eval.WrongTarget)
	require.NotNil(t, wt.Unrelated)
	require.Positive(t, wt.Unrelated.Made)
	require.Contains(t, wt.Wrong, "move-london-to-berlin")
	// And the sister's move replaces the user's home.
	require.Contains(t, off(eval.OtherEntity).Lost, "third-party-sister-moved")

	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table, true))
	lines := strings.Split(table.String(), "\n")
	require.Equal(t, fmt.Sprintf("shipped: correct answers, guards on: 5 scenarios, 0 false holds, 0 scenarios wrong, %s", b.Calls), lines[1])
	require.Equal(t, eval.InjectHeader, strings.Fields(lines[3]))
	for i, k := range set.Kinds {
		for j, g := range []eval.GuardRun{k.On, k.Off} {
			fields := strings.Fields(lines[4+2*i+j])
			require.Equal(t, []string{string(k.Kind), "shipped", "1.00", map[bool]string{true: "on", false: "off"}[g.Guards], strconv.Itoa(g.Made),
				strconv.Itoa(g.Held)}, fields[:6])
			require.Equal(t, []string{strconv.Itoa(g.Applied), strconv.Itoa(g.Refused), strconv.Itoa(g.None), strconv.Itoa(len(g.Scenarios)),
				strconv.Itoa(len(g.Wrong)), strconv.Itoa(len(g.Lost)), fmt.Sprintf("%.2f", g.Calls.PerEpisode)}, fields[7:])
		}
	}
	require.Contains(t, table.String(), fmt.Sprintf("shipped: the kinds that pass word checks, guards on: %d made, %d held", wp.Made, wp.Held))
	require.Contains(t, table.String(), "wrong-target, shipped, guards off: ")
	require.Contains(t, table.String(), "\nunrelated-retract, shipped, guards off:\n"+
		"  move-london-to-berlin/c2: retract temporal of \"User mostly works from home\": applied\n", "scenario order")
}

// eval --perturb at a small size: two perturbations on their own and together, on
// the shipped and the held-out set, each with the guards on and off; the counts add
// up whatever the guards hold, the guards off hold nothing, and a refusing second
// opinion is asked.
func TestEvalPerturb(t *testing.T) {
	t.Parallel()
	h := &harness{t: t, srv: llmtest.NewServer(t)}
	heldOut, _, err := eval.HeldOut()
	require.NoError(t, err)
	var rep eval.PerturbReport
	// Two ways and both together: each run migrates a schema of its own, which on a
	// Citus cluster takes seconds; every way is a row of the same code.
	ways := []eval.Perturbation{eval.PerturbSlot, eval.PerturbAlias}
	stdout, stderr := h.runJSON(&rep, "--perturb=slot,alias", "--verifier", "no", "--only",
		"move-brooklyn-to-miami,correction-name-spelling,"+heldOut[0].Name)
	require.Contains(t, stderr, "eval: 2 scenarios shipped, 1 heldout, the gold model's correct answers perturbed 2 ways, guards on and off, second opinion no")
	require.Zero(t, h.srv.ChatCount())
	require.Equal(t, eval.VerifierNo, rep.Verifier)
	for _, field := range []string{`"revisions":`, `"perturbed":`, `"false_holds": [`, `"perturbed_held":`, `"revisions_given":`,
		`"per_episode_without_verification":`} {
		require.Contains(t, stdout, field)
	}
	require.Len(t, rep.Sets, 2)
	require.Equal(t, []string{eval.SetShipped, eval.SetHeldOut}, []string{rep.Sets[0].Set, rep.Sets[1].Set})
	for _, set := range rep.Sets {
		require.Len(t, set.Results, len(ways)+1)
		for i, res := range set.Results {
			if i < len(ways) {
				require.Equal(t, string(ways[i]), res.Name)
				require.Equal(t, []eval.Perturbation{ways[i]}, res.Perturbations)
			} else {
				require.Equal(t, "all", res.Name)
				require.Equal(t, ways, res.Perturbations)
			}
			for _, p := range []eval.PerturbRun{res.On, res.Off} {
				what := fmt.Sprintf("%s, %s, guards %v", set.Set, res.Name, p.Guards)
				require.Positive(t, p.Revisions, what)
				require.Len(t, p.Directive, p.Revisions, what)
				require.LessOrEqual(t, p.Perturbed, p.Revisions, what)
				require.LessOrEqual(t, p.PerturbedHeld, len(p.FalseHolds), what)
				causes := 0
				for _, n := range p.Causes {
					causes += n
				}
				require.Equal(t, len(p.FalseHolds), causes, what)
				for _, s := range p.Lost {
					require.Contains(t, p.Wrong, s, what)
				}
			}
			require.Empty(t, res.Off.FalseHolds, "%s: the guards off hold nothing", res.Name)
			require.Zero(t, res.Off.Calls.Verification)
			require.Equal(t, res.On.Revisions, res.Off.Revisions, "the same answers, guards on or off")
		}
	}
	// The shipped Miami move is perturbed both ways, Jon's name by alias too.
	for _, res := range rep.Sets[0].Results {
		require.Positive(t, res.On.Perturbed, res.Name)
	}

	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table, false))
	lines := strings.Split(table.String(), "\n")
	require.Equal(t, eval.PerturbHeader, strings.Fields(lines[2]))
	row := strings.Fields(lines[3])
	p := rep.Sets[0].Results[0].On
	require.Equal(t, []string{"slot", "shipped", "on", strconv.Itoa(p.Revisions), strconv.Itoa(p.Perturbed), strconv.Itoa(len(p.FalseHolds))}, row[:6])
}

// runJSON runs the command with args and --json, decodes its report into v and
// returns what it printed.
func (h *harness) runJSON(v any, args ...string) (stdout, stderr string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	require.NoError(h.t, run(ctx, append(args, "--json"), h.env, &out, &errb), errb.String())
	require.NoError(h.t, json.Unmarshal(out.Bytes(), v), out.String())
	return out.String(), errb.String()
}

func withZeros(m map[string]int) map[string]int {
	for _, k := range []string{eval.OutcomeHeld, eval.OutcomeApplied, eval.OutcomeRefused, eval.OutcomeNone} {
		m[k] += 0
	}
	return m
}

// --gold answers with the labels: every score 1.0, through the same report.
func TestEvalGold(t *testing.T) {
	t.Parallel()
	h := &harness{t: t, srv: llmtest.NewServer(t)}
	var r eval.Report
	h.runJSON(&r, "--gold", "--only", "dependent_beliefs,move")
	require.Equal(t, eval.GoldModel, r.ChatModel)
	require.Zero(t, h.srv.ChatCount())
	m := r.Runs[0].Total
	require.Equal(t, 14, m.Scenarios)
	for _, ratio := range []eval.Ratio{m.Current, m.History, m.Dependencies, m.Questions} {
		require.Equal(t, ratio.Total, ratio.Passed)
		require.Positive(t, ratio.Total)
	}
}
