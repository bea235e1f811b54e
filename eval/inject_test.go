package eval_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/memory"
)

func TestParseInjections(t *testing.T) {
	t.Parallel()
	got, err := eval.ParseInjections([]string{"reason-flip:0.25", " wrong-target "})
	require.NoError(t, err)
	require.Equal(t, []eval.Injection{{Kind: eval.WrongTarget, Rate: 1}, {Kind: eval.ReasonFlip, Rate: 0.25}}, got, "report order")
	require.Equal(t, "reason-flip:0.25", got[1].String())
	all, err := eval.ParseInjections([]string{"all:0.5"})
	require.NoError(t, err)
	require.Len(t, all, len(eval.InjectKinds))
	for i, inj := range all {
		require.Equal(t, eval.Injection{Kind: eval.InjectKinds[i], Rate: 0.5}, inj)
	}
	for entry, want := range map[string]string{
		"bogus":            "--inject bogus: not a mistake (wrong-target, unrelated-retract",
		"wrong-target:0":   "--inject wrong-target: rate 0 is not within (0, 1]",
		"date-slip:1.5":    "--inject date-slip: rate 1.5 is not within (0, 1]",
		"date-slip:often":  `--inject date-slip:often: rate "often" is not a number`,
		"all,reason-flip":  "--inject reason-flip: given twice",
		"mass-retract:NaN": "--inject mass-retract: rate NaN is not within (0, 1]",
	} {
		_, err := eval.ParseInjections([]string{entry})
		if entry == "all,reason-flip" {
			_, err = eval.ParseInjections([]string{"all", "reason-flip"})
		}
		require.ErrorContains(t, err, want, entry)
	}
}

// goldPrompt answers transcript id of scenario name, in the memory the gold facts
// before it leave, with inj's mistake; it returns the parsed facts, the candidates the
// prompt showed and the mistakes made.
func goldPrompt(t *testing.T, name, id string, inj *eval.Injection, seed uint64) ([]memory.Fact, []shown, []eval.Mistake) {
	t.Helper()
	scenarios, labels := shippedGold(t)
	gold, err := eval.NewGold(scenarios, labels, inj, seed)
	require.NoError(t, err)
	for _, s := range scenarios {
		if s.Name != name {
			continue
		}
		l := labels[slices.IndexFunc(labels, func(l eval.Labels) bool { return l.Scenario == name })]
		r := replayLabels(s, l)
		for j, tr := range s.Transcripts {
			if tr.ID != id {
				continue
			}
			res, err := gold.Chat(context.Background(), extractionPrompt(t, s, j, r.before[j], nil))
			require.NoError(t, err)
			facts, _, err := extract.Parse(res.Content, len(r.before[j]), tr.OccurredAt)
			require.NoError(t, err, res.Content)
			return facts, r.before[j], gold.Mistakes()
		}
	}
	t.Fatalf("no transcript %s/%s", name, id)
	return nil, nil, nil
}

// Each kind makes its mistake where it can, records it, and leaves the rest of the
// answer as the labels say. Berlin's transcript shows London (the fact's target) and
// "works from home" (another slot, which the transcript never mentions).
func TestInjectMistakes(t *testing.T) {
	t.Parallel()
	const name = "move-london-to-berlin"
	berlin := "User is based in Berlin"
	wfh := "User mostly works from home"
	right, cands, none := goldPrompt(t, name, "c2", nil, 1)
	require.Empty(t, none)
	require.Equal(t, []shown{{"User is based in London", "location", false}, {wfh, "work_location", false}}, cands)
	require.Len(t, right, 2)
	require.Equal(t, berlin, right[0].Statement)
	require.Equal(t, &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}, right[0].Resolves)

	firstUser := "We relocated to Berlin in September because my partner got a job there. The U-Bahn is taking some getting used to."
	mistake := func(kind eval.InjectKind, action memory.Action, reason memory.Reason, statement string) eval.Mistake {
		quote := map[eval.InjectKind]string{eval.WrongTarget: "We relocated to Berlin in September",
			eval.Hallucinated: "Actually, it's Springfield now."}[kind]
		return eval.Mistake{Kind: kind, Scenario: name, Transcript: "c2", Action: action, Reason: reason, Target: wfh, Statement: statement,
			Quote: cmp.Or(quote, firstUser)}
	}
	for _, tc := range []struct {
		kind  eval.InjectKind
		check func(t *testing.T, facts []memory.Fact, mistakes []eval.Mistake)
	}{
		{eval.WrongTarget, func(t *testing.T, facts []memory.Fact, mistakes []eval.Mistake) {
			require.Len(t, facts, 2)
			require.Equal(t, 1, facts[0].Resolves.Index, "moved to the other slot")
			m := mistake(eval.WrongTarget, memory.ActionSupersede, memory.ReasonTemporal, berlin)
			m.Unrelated = true
			require.Equal(t, []eval.Mistake{m}, mistakes)
		}},
		{eval.UnrelatedRetract, func(t *testing.T, facts []memory.Fact, mistakes []eval.Mistake) {
			require.Len(t, facts, 3)
			require.Equal(t, right, facts[:2])
			require.Empty(t, facts[2].Statement)
			require.Equal(t, firstUser, facts[2].Quote)
			require.Equal(t, &memory.Directive{Index: 1, Action: memory.ActionRetract, Reason: memory.ReasonTemporal}, facts[2].Resolves)
			m := mistake(eval.UnrelatedRetract, memory.ActionRetract, memory.ReasonTemporal, "")
			m.Part = "unmentioned"
			require.Equal(t, []eval.Mistake{m}, mistakes)
		}},
		{eval.MassRetract, func(t *testing.T, facts []memory.Fact, mistakes []eval.Mistake) {
			require.Len(t, facts, 3, "London is superseded already: only the other is retracted")
			require.Equal(t, &memory.Directive{Index: 1, Action: memory.ActionRetract, Reason: memory.ReasonTemporal}, facts[2].Resolves)
			require.Equal(t, []eval.Mistake{mistake(eval.MassRetract, memory.ActionRetract, memory.ReasonTemporal, "")}, mistakes)
		}},
		{eval.Hallucinated, func(t *testing.T, facts []memory.Fact, mistakes []eval.Mistake) {
			require.Len(t, facts, 3)
			require.Equal(t, "User's work location is Springfield", facts[2].Statement)
			require.NotContains(t, firstUser, "Springfield")
			require.Equal(t, &memory.Directive{Index: 1, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}, facts[2].Resolves)
			require.Equal(t, []eval.Mistake{mistake(eval.Hallucinated, memory.ActionSupersede, memory.ReasonTemporal, "User's work location is Springfield")}, mistakes)
		}},
		{eval.DateSlip, func(t *testing.T, facts []memory.Fact, mistakes []eval.Mistake) {
			require.Equal(t, "2023-09-01", facts[0].ValidFrom.Format("2006-01-02"), "a year before September 2024")
			require.Equal(t, right[1], facts[1])
			require.Len(t, mistakes, 1)
			require.Equal(t, "User is based in London", mistakes[0].Target)
		}},
		{eval.ReasonFlip, func(t *testing.T, facts []memory.Fact, mistakes []eval.Mistake) {
			require.Equal(t, memory.ReasonCorrection, facts[0].Resolves.Reason)
			require.Len(t, mistakes, 1)
			require.Equal(t, memory.ReasonCorrection, mistakes[0].Reason)
		}},
		{eval.WrongReinforce, func(t *testing.T, facts []memory.Fact, mistakes []eval.Mistake) {
			require.Len(t, facts, 3)
			require.Equal(t, wfh, facts[2].Statement)
			require.Equal(t, &memory.Directive{Index: 1, Action: memory.ActionReinforce, Reason: memory.ReasonRestated}, facts[2].Resolves)
			require.Equal(t, []eval.Mistake{mistake(eval.WrongReinforce, memory.ActionReinforce, memory.ReasonRestated, wfh)}, mistakes)
		}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			facts, _, mistakes := goldPrompt(t, name, "c2", &eval.Injection{Kind: tc.kind, Rate: 1}, 1)
			tc.check(t, facts, mistakes)
		})
	}
}

// A mass retraction retracts every candidate the answer does not revise; an injected
// retraction takes one the answer does not revise, or none.
func TestInjectRetractions(t *testing.T) {
	t.Parallel()
	facts, cands, mistakes := goldPrompt(t, "dep-timezone-new-york-to-los-angeles", "c3", &eval.Injection{Kind: eval.MassRetract, Rate: 1}, 1)
	require.Len(t, cands, 3)
	require.Len(t, facts, 3)
	require.Len(t, mistakes, 2)
	require.Equal(t, []int{1, 2}, []int{facts[1].Resolves.Index, facts[2].Resolves.Index})

	// Portland's move revises Seattle, its one candidate: nothing else to retract.
	facts, _, mistakes = goldPrompt(t, "move-seattle-portland-denver", "c2", &eval.Injection{Kind: eval.UnrelatedRetract, Rate: 1}, 1)
	require.Len(t, facts, 1)
	require.Empty(t, mistakes)
	// Nor a mass retraction of one candidate.
	_, _, mistakes = goldPrompt(t, "move-seattle-portland-denver", "c2", &eval.Injection{Kind: eval.MassRetract, Rate: 1}, 1)
	require.Empty(t, mistakes)
}

// At a rate below 1, which opportunities are taken depends on the seed alone, not on
// the order the prompts come in.
func TestInjectRateIsDeterministic(t *testing.T) {
	t.Parallel()
	scenarios, labels := shippedGold(t)
	by := map[string]eval.Labels{}
	for _, l := range labels {
		by[l.Scenario] = l
	}
	mistakes := func(kind eval.InjectKind, rate float64, seed uint64, reverse bool) []eval.Mistake {
		gold, err := eval.NewGold(scenarios, labels, &eval.Injection{Kind: kind, Rate: rate}, seed)
		require.NoError(t, err)
		type ask struct {
			s eval.Scenario
			j int
			r replay
		}
		var asks []ask
		for _, s := range scenarios {
			r := replayLabels(s, by[s.Name])
			for j := range s.Transcripts {
				asks = append(asks, ask{s, j, r})
			}
		}
		if reverse {
			slices.Reverse(asks)
		}
		for _, a := range asks {
			_, err := gold.Chat(context.Background(), extractionPrompt(t, a.s, a.j, a.r.before[a.j], nil))
			require.NoError(t, err)
		}
		ms := gold.Mistakes()
		slices.SortFunc(ms, func(a, b eval.Mistake) int {
			return cmp.Or(strings.Compare(a.Scenario, b.Scenario), strings.Compare(a.Transcript, b.Transcript),
				strings.Compare(a.Target, b.Target))
		})
		return ms
	}
	for _, kind := range []eval.InjectKind{eval.UnrelatedRetract, eval.ReasonFlip} {
		every := mistakes(kind, 1, 1, false)
		half := mistakes(kind, 0.5, 1, false)
		require.Equal(t, half, mistakes(kind, 0.5, 1, true), "%s: the same mistakes in any order", kind)
		require.NotEmpty(t, half, kind)
		require.Less(t, len(half), len(every), kind)
		require.NotEqual(t, half, mistakes(kind, 0.5, 2, false), "%s: another seed, other mistakes", kind)
	}
}
