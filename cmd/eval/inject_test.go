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
// another slot, a hedge beside a belief it never mentions, and a move a time zone rests
// on.
var injectScenarios = []string{"move-london-to-berlin", "hedge-might-move-to-austin", "dep-timezone-new-york-to-los-angeles"}

// eval --inject at a small size, every kind: correct answers hold nothing and leave
// nothing wrong; every mistake made is held, applied, refused by another rule, or none
// of these, exactly one; with the guards off nothing is held and an obeyed retraction
// is applied. The counts of what the guards hold are the lead's to read, not this
// test's: it stays true whatever the guards hold.
func TestEvalInject(t *testing.T) {
	t.Parallel()
	h := &harness{t: t, srv: llmtest.NewServer(t)}
	var rep eval.InjectReport
	stdout, stderr := h.runJSON(&rep, "--inject", "all", "--only", strings.Join(injectScenarios, ","), "--seed", "3")
	require.Contains(t, stderr, "eval: 3 scenarios, the gold model making 7 kinds of mistake, guards on and off")
	require.Contains(t, stderr, "eval: reason-flip:1, guards off: ")
	require.Equal(t, uint64(3), rep.Seed)
	require.Equal(t, llmtest.DefaultEmbedModel, rep.EmbedModel)
	require.Equal(t, eval.ShippedName, rep.Scenarios)
	require.Zero(t, h.srv.ChatCount(), "the gold model answers, not the server")

	require.Contains(t, stdout, `"false_holds": []`, "a list, even empty")
	b := rep.Baseline
	require.Equal(t, 3, b.Scenarios)
	require.Empty(t, b.FalseHolds, "correct answers are never held")
	require.Empty(t, b.Wrong)
	require.Zero(t, b.Stats)
	require.Equal(t, 1.0, *b.Total.Current.Accuracy)

	require.Len(t, rep.Kinds, len(eval.InjectKinds))
	for i, k := range rep.Kinds {
		require.Equal(t, eval.Injection{Kind: eval.InjectKinds[i], Rate: 1}, k.Injection)
		for _, g := range []eval.GuardRun{k.On, k.Off} {
			what := fmt.Sprintf("%s, guards %v", k.Kind, g.Guards)
			require.Positive(t, g.Made, what)
			require.Len(t, g.Mistakes, g.Made, what)
			count := map[string]int{}
			for _, m := range g.Mistakes {
				require.Equal(t, k.Kind, m.Kind, what)
				require.Contains(t, injectScenarios, m.Scenario, what)
				require.Contains(t, g.Scenarios, m.Scenario, what)
				require.NotEmpty(t, m.Target, what)
				count[m.Outcome]++
			}
			require.Equal(t, map[string]int{eval.OutcomeHeld: g.Held, eval.OutcomeApplied: g.Applied, eval.OutcomeRefused: g.Refused,
				eval.OutcomeNone: g.None}, withZeros(count), what)
			require.Equal(t, g.Made, g.Held+g.Applied+g.Refused+g.None, what)
			for _, s := range g.Lost {
				require.Contains(t, g.Wrong, s, "%s: a scenario that lost a belief is wrong", what)
			}
			for _, s := range g.Wrong {
				require.Contains(t, g.Scenarios, s, "%s: only a mistake leaves a scenario wrong", what)
			}
		}
		require.Zero(t, k.Off.Held, "%s: the guards off hold nothing", k.Kind)
		require.True(t, k.On.Guards)
		require.False(t, k.Off.Guards)
	}
	off := func(kind eval.InjectKind) eval.GuardRun {
		return rep.Kinds[slices.Index(eval.InjectKinds, kind)].Off
	}
	// Without guards, the engine obeys every injected retraction: Boston is gone.
	for _, kind := range []eval.InjectKind{eval.UnrelatedRetract, eval.MassRetract} {
		require.Equal(t, off(kind).Made, off(kind).Applied, kind)
	}
	require.Contains(t, off(eval.UnrelatedRetract).Lost, "hedge-might-move-to-austin")
	// And supersedes the unrelated belief a wrong index names, leaving London current.
	wt := off(eval.WrongTarget)
	require.NotNil(t, wt.Unrelated)
	require.Positive(t, wt.Unrelated.Made)
	require.Contains(t, wt.Wrong, "move-london-to-berlin")

	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table, true))
	lines := strings.Split(table.String(), "\n")
	require.Equal(t, "correct answers, guards on: 3 scenarios, 0 false holds, 0 scenarios wrong", lines[1])
	require.Equal(t, eval.InjectHeader, strings.Fields(lines[3]))
	for i, k := range rep.Kinds {
		for j, g := range []eval.GuardRun{k.On, k.Off} {
			fields := strings.Fields(lines[4+2*i+j])
			require.Equal(t, []string{string(k.Kind), "1.00", map[bool]string{true: "on", false: "off"}[g.Guards], strconv.Itoa(g.Made),
				strconv.Itoa(g.Held)}, fields[:5])
			require.Equal(t, []string{strconv.Itoa(g.Applied), strconv.Itoa(g.Refused), strconv.Itoa(g.None), strconv.Itoa(len(g.Scenarios)),
				strconv.Itoa(len(g.Wrong)), strconv.Itoa(len(g.Lost))}, fields[6:])
		}
	}
	require.Contains(t, table.String(), "wrong-target, guards off: ")
	require.Contains(t, table.String(), "\nunrelated-retract, guards off:\n"+
		"  move-london-to-berlin/c2: retract temporal of \"User mostly works from home\": applied\n"+
		"  hedge-might-move-to-austin/c2: retract temporal of \"User lives in Boston, near Fenway\": applied\n", "scenario order")
}

// runJSON runs the command with args and --json, decodes its report into v and
// returns what it printed.
func (h *harness) runJSON(v any, args ...string) (stdout, stderr string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
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
