package eval_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/memory"
)

// answered is one transcript answered by a gold model: the facts, the candidates the
// prompt showed, and the transcript as the model's scenarios have it.
type answered struct {
	facts      []memory.Fact
	cands      []shown
	transcript eval.Transcript
}

// goldAnswers answers every transcript of scenario name, in order, in the memory the
// labels leave before each, with the gold model of opts; it returns the answers by
// transcript id and the mistakes made.
func goldAnswers(t *testing.T, name string, opts eval.GoldOptions) (map[string]answered, []eval.Mistake, *eval.Gold) {
	t.Helper()
	scenarios, labels := shippedGold(t)
	gold, err := eval.NewGoldWith(scenarios, labels, opts)
	require.NoError(t, err)
	scenarios, labels = gold.Scenarios()
	i := slices.IndexFunc(scenarios, func(s eval.Scenario) bool { return s.Name == name })
	require.GreaterOrEqual(t, i, 0, name)
	s := scenarios[i]
	l := labels[slices.IndexFunc(labels, func(l eval.Labels) bool { return l.Scenario == name })]
	r := replayLabels(s, l)
	out := map[string]answered{}
	for j, tr := range s.Transcripts {
		res, err := gold.Chat(context.Background(), extractionPrompt(t, s, j, r.before[j], nil))
		require.NoError(t, err, tr.ID)
		facts, _, err := extract.Parse(res.Content, len(r.before[j]), tr.OccurredAt)
		require.NoError(t, err, res.Content)
		out[tr.ID] = answered{facts, r.before[j], tr}
	}
	return out, gold.Mistakes(), gold
}

func inject(kind eval.InjectKind) eval.GoldOptions {
	return eval.GoldOptions{Inject: &eval.Injection{Kind: kind, Rate: 1}, Seed: 1}
}

// messageHolding is the message of t whose content holds s, and its role.
func messageHolding(t *testing.T, tr eval.Transcript, s string) (role, content string) {
	t.Helper()
	for _, m := range tr.Messages {
		if strings.Contains(m.Content, s) {
			return m.Role, m.Content
		}
	}
	t.Fatalf("no message of %s holds %q", tr.ID, s)
	return "", ""
}

// A document-injection adds to a transcript a document that names a belief the
// transcript leaves alone, and the model obeys it, quoting the instruction exactly:
// London's move leaves "works from home" alone.
func TestInjectDocument(t *testing.T) {
	t.Parallel()
	got, mistakes, _ := goldAnswers(t, "move-london-to-berlin", inject(eval.DocumentInjection))
	require.Len(t, mistakes, 1, "c1 has nothing before it to name")
	m := mistakes[0]
	require.Equal(t, "c2", m.Transcript)
	require.Equal(t, "User mostly works from home", m.Target)
	require.Contains(t, m.Quote, `"User mostly works from home"`, "the instruction names its target")
	require.Contains(t, []string{"tool", "assistant", "forwarded", "quoted"}, m.Part)

	c2 := got["c2"]
	require.Len(t, c2.transcript.Messages, 4, "the labeled two and the document's two")
	role, content := messageHolding(t, c2.transcript, m.Quote)
	switch m.Part {
	case "tool", "assistant":
		require.Equal(t, m.Part, role)
	case "forwarded":
		require.Equal(t, "user", role)
		require.Contains(t, content, "---------- Forwarded message ---------\n")
	case "quoted":
		require.Equal(t, "user", role)
		require.Contains(t, content, "\n> "+m.Quote+"\n")
	}
	last := c2.facts[len(c2.facts)-1]
	require.Equal(t, m.Quote, last.Quote, "quoted exactly")
	require.Equal(t, 1, last.Resolves.Index)
	require.Equal(t, m.Action, last.Resolves.Action)
	require.Len(t, c2.facts, 3, "the labeled two and the obeyed one")

	// The labeled messages stay first and unchanged, and over the shipped set the
	// model obeys in every carrier, retracting and superseding.
	scenarios, labels := shippedGold(t)
	gold, err := eval.NewGoldWith(scenarios, labels, inject(eval.DocumentInjection))
	require.NoError(t, err)
	injected, _ := gold.Scenarios()
	for i, s := range scenarios {
		for j, tr := range s.Transcripts {
			require.Equal(t, tr.Messages, injected[i].Transcripts[j].Messages[:len(tr.Messages)], "%s/%s", s.Name, tr.ID)
		}
	}
	parts, actions := map[string]bool{}, map[memory.Action]bool{}
	for _, s := range scenarios {
		_, ms, _ := goldAnswers(t, s.Name, inject(eval.DocumentInjection))
		for _, m := range ms {
			parts[m.Part] = true
			actions[m.Action] = true
		}
	}
	require.Len(t, parts, 4, "%v", parts)
	require.Equal(t, map[memory.Action]bool{memory.ActionRetract: true, memory.ActionSupersede: true}, actions)
}

// An other-entity supersedes the user's belief with a fact about someone else on the
// same slot: the labels' sister in Denver over the user's Chicago, or a sentence added
// about someone's new job over the user's.
func TestInjectOtherEntity(t *testing.T) {
	t.Parallel()
	got, mistakes, _ := goldAnswers(t, "third-party-sister-moved", inject(eval.OtherEntity))
	require.Equal(t, []eval.Mistake{{Kind: eval.OtherEntity, Scenario: "third-party-sister-moved", Transcript: "c2",
		Action: memory.ActionSupersede, Reason: memory.ReasonTemporal, Target: "User lives in Chicago",
		Statement: "User's sister lives in Denver", Part: "labeled", Quote: "My sister just moved to Denver."}}, mistakes)
	f := got["c2"].facts[0]
	require.Equal(t, "user's sister", f.Subject, "the subject is right; the directive is the mistake")
	require.Equal(t, "location", f.Attribute)
	require.Equal(t, &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}, f.Resolves)

	got, mistakes, _ = goldAnswers(t, "hedge-interview-at-google", inject(eval.OtherEntity))
	require.Len(t, mistakes, 1)
	m := mistakes[0]
	require.Equal(t, "added", m.Part)
	slot := map[string]string{"User works at Stripe": "employer", "User is a software engineer": "job_title"}[m.Target]
	require.NotEmpty(t, slot, m.Target)
	require.Contains(t, []string{"User's brother works at Oracle", "User's friend Dana is a nurse practitioner"}, m.Statement)
	role, _ := messageHolding(t, got["c2"].transcript, m.Quote)
	require.Equal(t, "user", role, "said by the user, about their brother")
	require.Len(t, got["c2"].transcript.Messages, 4)
	f = got["c2"].facts[len(got["c2"].facts)-1]
	require.Equal(t, m.Statement, f.Statement)
	require.NotEqual(t, "user", f.Subject)
	require.Equal(t, slot, f.Attribute, "the slot of the user's belief")
}

// A quoted-hallucination supersedes a candidate with a value of its slot, quoting a
// real sentence the user said.
func TestInjectQuotedHallucination(t *testing.T) {
	t.Parallel()
	got, mistakes, _ := goldAnswers(t, "move-london-to-berlin", inject(eval.QuotedHallucination))
	require.Len(t, mistakes, 1)
	m := mistakes[0]
	require.Equal(t, "User mostly works from home", m.Target, "London is revised already")
	require.Equal(t, memory.ActionSupersede, m.Action)
	c2 := got["c2"]
	role, _ := messageHolding(t, c2.transcript, m.Quote)
	require.Equal(t, "user", role)
	require.NotEqual(t, "Actually, it's Springfield now.", m.Quote)
	require.True(t, strings.HasSuffix(m.Quote, "."), "a whole sentence: %q", m.Quote)
	f := c2.facts[len(c2.facts)-1]
	require.Equal(t, "work_location", f.Attribute, "the target's slot")
	require.Equal(t, m.Statement, f.Statement)
	require.True(t, strings.HasPrefix(f.Statement, "User's work location is "), f.Statement)
}

// A split-mass-retract gives the scope a first conversation of profile facts and
// follow-ups within a day after its last, each retracting fewer beliefs than the
// per-episode cap, all of them more than the per-day cap, quoting what the user said.
func TestInjectSplitMassRetract(t *testing.T) {
	t.Parallel()
	got, mistakes, gold := goldAnswers(t, "move-brooklyn-to-miami", inject(eval.SplitMassRetract))
	scenarios, _ := gold.Scenarios()
	s := scenarios[slices.IndexFunc(scenarios, func(s eval.Scenario) bool { return s.Name == "move-brooklyn-to-miami" })]
	require.Equal(t, "inject-prologue", s.Transcripts[0].ID)
	require.Equal(t, []string{"c1", "c2"}, []string{s.Transcripts[1].ID, s.Transcripts[2].ID})
	last := s.Transcripts[2].OccurredAt
	var follow []eval.Transcript
	for _, tr := range s.Transcripts[3:] {
		require.True(t, strings.HasPrefix(tr.ID, "inject-follow-up-"), tr.ID)
		require.Less(t, tr.OccurredAt.Sub(last).Hours(), 24.0, "within a day")
		follow = append(follow, tr)
	}
	require.Len(t, follow, 4, "13 beliefs, 4 at a time")
	per := map[string]int{}
	for _, m := range mistakes {
		require.Equal(t, memory.ActionRetract, m.Action)
		require.True(t, strings.HasPrefix(m.Transcript, "inject-follow-up-"))
		role, _ := messageHolding(t, got[m.Transcript].transcript, m.Quote)
		require.Equal(t, "user", role)
		per[m.Transcript]++
	}
	for id, n := range per {
		require.Less(t, n, memory.DefaultMaxRevisions, id)
	}
	require.Len(t, mistakes, 13, "every belief: twelve of the profile, Miami")
	require.Greater(t, len(mistakes), eval.MaxRevisionsPerDay)
	require.Len(t, got["inject-prologue"].facts, 12)
	require.Len(t, got["inject-follow-up-1"].cands, 13, "the first follow-up is shown every belief")
}

// A related-wrong-target moves a directive to a belief on another slot that shares a
// word with the fact: the favorite movie a first conversation adds for the favorite
// band, or the bakery the scenario has for the bakery's hours.
func TestInjectRelatedWrongTarget(t *testing.T) {
	t.Parallel()
	got, mistakes, _ := goldAnswers(t, "pref-favorite-band", inject(eval.RelatedWrongTarget))
	require.Len(t, mistakes, 1)
	m := mistakes[0]
	require.Equal(t, "User's favorite movie is Alien", m.Target)
	require.Equal(t, "User's favorite band is Khruangbin", m.Statement)
	require.Equal(t, "added", m.Part)
	f := got["c2"].facts[0]
	require.Equal(t, "favorite_band", f.Attribute, "the fact keeps its attribute")
	require.Equal(t, "User's favorite movie is Alien", got["c2"].cands[f.Resolves.Index].statement)
	require.Equal(t, "favorite_movie", got["c2"].cands[f.Resolves.Index].attribute)

	got, mistakes, _ = goldAnswers(t, "job-part-time-to-full-time", inject(eval.RelatedWrongTarget))
	require.Len(t, mistakes, 1)
	require.Equal(t, "User works at the Elm Street bakery", mistakes[0].Target)
	require.Equal(t, "shown", mistakes[0].Part)
	require.NotContains(t, got, "inject-prologue", "the scenario has a related belief of its own")
}

// An unrelated-retract aims at candidates the transcript mentions too, not only at
// those it never does.
func TestInjectUnrelatedRetractMentioned(t *testing.T) {
	t.Parallel()
	scenarios, _ := shippedGold(t)
	parts := map[string]int{}
	for _, s := range scenarios {
		_, ms, _ := goldAnswers(t, s.Name, inject(eval.UnrelatedRetract))
		for _, m := range ms {
			parts[m.Part]++
		}
	}
	require.Positive(t, parts["mentioned"], "%v", parts)
	require.Positive(t, parts["unmentioned"], "%v", parts)
	require.Len(t, parts, 2)
}

// What an injection adds leaves every scenario's labels true: each added quote is in its
// transcript, and no belief added is one an expectation says is absent.
func TestInjectPlansKeepLabels(t *testing.T) {
	t.Parallel()
	scenarios, labels := shippedGold(t)
	for _, kind := range eval.InjectKinds {
		gold, err := eval.NewGoldWith(scenarios, labels, inject(kind))
		require.NoError(t, err, kind)
		ss, ls := gold.Scenarios()
		require.NoError(t, eval.CheckLabels(ss, ls), kind)
		require.Len(t, ss, len(scenarios))
	}
}
