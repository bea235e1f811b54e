package eval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

func TestParsePerturbations(t *testing.T) {
	t.Parallel()
	all, err := eval.ParsePerturbations("true")
	require.NoError(t, err)
	require.Equal(t, eval.Perturbations, all)
	got, err := eval.ParsePerturbations("quote, slot,quote")
	require.NoError(t, err)
	require.Equal(t, []eval.Perturbation{eval.PerturbSlot, eval.PerturbQuote}, got, "report order, once each")
	_, err = eval.ParsePerturbations("slot,typo")
	require.ErrorContains(t, err, "--perturb typo: not a perturbation (all, slot, statement, quote, language, alias)")
}

func perturb(ps ...eval.Perturbation) eval.GoldOptions {
	return eval.GoldOptions{Perturb: ps, Seed: 1}
}

// Each perturbation rewrites the correct supersession of Miami's move as it says, and
// the model records it; the rest of the answer stays as the labels say.
func TestPerturbRewrites(t *testing.T) {
	t.Parallel()
	const quote = "I moved to Miami at the end of May"
	for _, tc := range []struct {
		p     eval.Perturbation
		check func(t *testing.T, f memory.Fact)
	}{
		{eval.PerturbSlot, func(t *testing.T, f memory.Fact) {
			require.Contains(t, []string{"home_city", "city_of_residence", "residence"}, f.Attribute)
		}},
		{eval.PerturbStatement, func(t *testing.T, f memory.Fact) {
			require.Contains(t, []string{"User's home is in Miami", "User resides in Miami"}, f.Statement)
		}},
		{eval.PerturbQuote, func(t *testing.T, f memory.Fact) {
			require.NotEqual(t, quote, f.Quote)
			require.Len(t, strings.Fields(f.Quote), len(strings.Fields(quote))-1, "a word left out: %q", f.Quote)
		}},
		{eval.PerturbLanguage, func(t *testing.T, f memory.Fact) {
			require.Contains(t, []string{"El usuario vive en Miami", "L'utilisateur habite à Miami"}, f.Statement)
			require.Equal(t, quote, f.Quote, "the quote stays the user's")
		}},
		{eval.PerturbAlias, func(t *testing.T, f memory.Fact) {
			require.Equal(t, "the user", f.Subject, "no name in the labels")
		}},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			t.Parallel()
			got, mistakes, gold := goldAnswers(t, "move-brooklyn-to-miami", perturb(tc.p))
			require.Empty(t, mistakes)
			f := got["c2"].facts[0]
			require.Equal(t, &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}, f.Resolves)
			tc.check(t, f)
			revs := gold.Revisions()
			require.Len(t, revs, 1, "one correct revision")
			require.Equal(t, []eval.Perturbation{tc.p}, revs[0].Perturbations)
			require.Equal(t, "User lives in Brooklyn, New York", revs[0].Target)
			require.Equal(t, f.Statement, revs[0].Statement)
			require.Equal(t, "User lives in Brooklyn, New York", got["c1"].facts[0].Statement, "what is not a revision stays")
		})
	}

	// A name the labels give the user is the subject of a later revision, and the fact
	// that gives it says it is an alias.
	got, _, gold := goldAnswers(t, "correction-name-spelling", perturb(eval.PerturbAlias))
	require.Equal(t, []string{"Jon"}, got["c1"].facts[0].SubjectAliases)
	require.Equal(t, "Jon", got["c2"].facts[0].Subject)
	require.Equal(t, []eval.Perturbation{eval.PerturbAlias}, gold.Revisions()[0].Perturbations)

	// A filler that ends the quote goes with the space before it.
	got, _, _ = goldAnswers(t, "move-lisbon-to-tokyo", perturb(eval.PerturbQuote))
	require.Equal(t, "Luna and I have been in Tokyo for two weeks", got["c2"].facts[0].Quote)

	// All together, on one fact: translated from the labels' wording, not reworded too.
	got, _, gold = goldAnswers(t, "move-brooklyn-to-miami", perturb(eval.Perturbations...))
	require.Equal(t, []eval.Perturbation{eval.PerturbSlot, eval.PerturbQuote, eval.PerturbLanguage, eval.PerturbAlias},
		gold.Revisions()[0].Perturbations)
	f := got["c2"].facts[0]
	require.Contains(t, []string{"El usuario vive en Miami", "L'utilisateur habite à Miami"}, f.Statement)
	require.NotEqual(t, "location", f.Attribute)
	require.NotEqual(t, quote, f.Quote)
	require.Equal(t, "the user", f.Subject)
	require.NotEqual(t, "User lives in Miami", f.Statement)
}

// A perturbed statement stored is still the labels' belief: a later revision of it
// finds it among the candidates (Seattle, Portland, Denver).
func TestPerturbFollowsRenamedBeliefs(t *testing.T) {
	t.Parallel()
	scenarios, labels := shippedGold(t)
	gold, err := eval.NewGoldWith(scenarios, labels, perturb(eval.PerturbStatement))
	require.NoError(t, err)
	s := scenarios[indexOf(scenarios, "move-seattle-portland-denver")]
	answer := func(j int, cands []shown) []memory.Fact {
		res, err := gold.Chat(context.Background(), extractionPrompt(t, s, j, cands, nil))
		require.NoError(t, err)
		facts, _, err := extract.Parse(res.Content, len(cands), s.Transcripts[j].OccurredAt)
		require.NoError(t, err)
		return facts
	}
	portland := answer(1, []shown{{"User lives in Seattle", "location", false}})[0]
	require.NotEqual(t, "User lives in Portland", portland.Statement)
	denver := answer(2, []shown{{portland.Statement, "location", false}})[0]
	require.NotNil(t, denver.Resolves, "the perturbed Portland is the target")
	require.Equal(t, 0, denver.Resolves.Index)
	require.Zero(t, gold.Stats().Unresolved)
}

func indexOf(scenarios []eval.Scenario, name string) int {
	for i, s := range scenarios {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// verify asks gold a second opinion on lines, as the verification prompt shows them.
func verify(t *testing.T, gold *eval.Gold, lines ...string) []bool {
	t.Helper()
	req := llm.SchemaRequest("You check revisions...", "Revisions to check:\n"+strings.Join(lines, "\n"), eval.VerificationSchemaName, nil)
	res, err := gold.Chat(context.Background(), req)
	require.NoError(t, err)
	var out struct {
		Verdicts []struct {
			Directive int    `json:"directive"`
			Holds     bool   `json:"holds"`
			Why       string `json:"why"`
		} `json:"verdicts"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &out))
	holds := make([]bool, len(out.Verdicts))
	for i, v := range out.Verdicts {
		require.Equal(t, i, v.Directive)
		require.NotEmpty(t, v.Why)
		holds[i] = v.Holds
	}
	return holds
}

// The gold verifier confirms exactly the directives of the labels (and of the correct
// answers it gave, perturbed), whatever case and spacing; yes confirms every one, no
// none. Each second opinion is counted apart from extraction.
func TestVerifierModes(t *testing.T) {
	t.Parallel()
	lines := []string{
		`[D0] supersede (temporal): "User lives in Brooklyn, New York" would be replaced by "user lives  in miami"; quote: "I moved to Miami at the end of May"`,
		`[D1] retract (temporal): "User lives in Brooklyn, New York" would no longer be believed; quote: "I moved to Miami at the end of May"`,
		`[D2] supersede (temporal): "User lives in Brooklyn, New York" would be replaced by "User lives in Phoenix"; quote: "Note for the assistant's memory"`,
		`[D3] retract (correction): "User has a golden retriever named Rufus" would no longer be believed; quote: "Let's start fresh."`,
		`[D4] supersede (duplicate): "User's name is Jon" would be replaced by "User's name is John"`,
	}
	scenarios, labels := shippedGold(t)
	for v, want := range map[eval.Verifier][]bool{
		eval.VerifierGold: {true, false, false, false, true},
		eval.VerifierYes:  {true, true, true, true, true},
		eval.VerifierNo:   {false, false, false, false, false},
	} {
		gold, err := eval.NewGoldWith(scenarios, labels, eval.GoldOptions{Verifier: v})
		require.NoError(t, err)
		require.Equal(t, want, verify(t, gold, lines...), v)
		require.Equal(t, eval.GoldCalls{Verification: 1, Verified: 5, Refused: countFalse(want)}, gold.Calls(), v)
	}
	_, err := eval.ParseVerifier("maybe")
	require.ErrorContains(t, err, "--verifier maybe: not gold, yes or no")

	// A correct answer reworded is confirmed as the model gave it.
	got, _, gold := goldAnswers(t, "move-brooklyn-to-miami", eval.GoldOptions{Perturb: []eval.Perturbation{eval.PerturbStatement}, Seed: 1})
	said := got["c2"].facts[0].Statement
	require.Equal(t, []bool{true, false}, verify(t, gold,
		`[D0] supersede (temporal): "User lives in Brooklyn, New York" would be replaced by "`+said+`"; quote: "moved to Miami"`,
		`[D1] supersede (temporal): "User lives in Brooklyn, New York" would be replaced by "User lives in Miami Beach"; quote: "moved to Miami"`))
	require.Equal(t, 2, gold.Calls().Extraction)
}

func countFalse(bs []bool) int {
	n := 0
	for _, b := range bs {
		if !b {
			n++
		}
	}
	return n
}
