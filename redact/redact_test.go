package redact

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"

	"github.com/credohq/credo/redact/redacttest"
)

func all(t *testing.T) *Redactor {
	t.Helper()
	r, err := New(All())
	require.NoError(t, err)
	return r
}

// Every planted secret of the corpus is found, as its kind, and nothing else of the
// sentence changes; no negative loses a character. Each detector's precision and recall
// are logged, and must be 1.
func TestCorpusPrecisionAndRecall(t *testing.T) {
	t.Parallel()
	r := all(t)
	type score struct{ tp, fp, fn int }
	scores := map[Kind]*score{}
	for _, k := range AllKinds() {
		scores[k] = &score{}
	}
	for _, p := range positives() {
		got, counts := r.Text(p.text)
		want := p.text
		wantCounts := Counts{}
		for _, s := range p.secrets {
			require.Contains(t, want, s.text)
			want = strings.Replace(want, s.text, Placeholder(s.kind), 1)
			wantCounts[string(s.kind)]++
		}
		for _, k := range AllKinds() {
			found, planted := counts[string(k)], wantCounts[string(k)]
			scores[k].tp += min(found, planted)
			scores[k].fp += max(found-planted, 0)
			scores[k].fn += max(planted-found, 0)
		}
		require.Equal(t, want, got, "%q", p.text)
		require.Equal(t, wantCounts, counts, "%q", p.text)
	}
	for _, n := range negatives {
		got, counts := r.Text(n)
		for k, c := range counts {
			scores[Kind(k)].fp += c
		}
		require.Equal(t, n, got, "ordinary talk is left as it is")
	}
	for _, k := range AllKinds() {
		s := scores[k]
		precision := float64(s.tp) / float64(s.tp+s.fp)
		recall := float64(s.tp) / float64(s.tp+s.fn)
		t.Logf("%-12s found %2d of %2d planted, %d false: precision %.2f, recall %.2f", k, s.tp, s.tp+s.fn, s.fp, precision, recall)
		require.Positive(t, s.tp, k)
		require.Equal(t, 1.0, precision, k)
		require.Equal(t, 1.0, recall, k)
	}
}

// Issue 51: each credential the first detectors let through is replaced, exactly: the
// sentence around it stays as it was.
func TestCredentialsOfIssue51(t *testing.T) {
	t.Parallel()
	r := all(t)
	for _, c := range redacttest.Credentials(3) {
		t.Run(c.Name, func(t *testing.T) {
			got, counts := r.Text(c.Sentence())
			require.Equal(t, strings.Replace(c.Say, "%s", Placeholder(Kind(c.Kind)), 1), got)
			require.Equal(t, Counts{c.Kind: 1}, counts)
		})
	}
}

// The rules left out of gitleaks' configuration are still in it (a rule renamed would
// run unnoticed), and every rule of rules.toml is run.
func TestRuleSet(t *testing.T) {
	t.Parallel()
	rs, err := loadRules()
	require.NoError(t, err)
	def, err := readConfig(gitleaks.DefaultConfig)
	require.NoError(t, err)
	for id := range excludedRules() {
		require.Contains(t, def.Rules, id)
		require.False(t, slices.ContainsFunc(rs.rules, func(r secretRule) bool { return r.id == id }), id)
	}
	own, err := readConfig(credoRules)
	require.NoError(t, err)
	require.Len(t, own.OrderedRules, 8)
	for _, id := range own.OrderedRules {
		require.True(t, strings.HasPrefix(id, "credo-"), id)
		require.True(t, slices.ContainsFunc(rs.rules, func(r secretRule) bool { return r.id == id }), id)
	}
}

// Emails and national ids are no kind: docs/configuration.md shows the patterns that opt
// in, and each does what it says.
func TestOptInPatternsOfTheDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	var patterns []Pattern
	for _, m := range regexp.MustCompile("--redact-pattern '([^']+)'").FindAllStringSubmatch(string(doc), -1) {
		p, err := ParsePattern(m[1])
		require.NoError(t, err, m[1])
		patterns = append(patterns, p)
	}
	require.Len(t, patterns, 2)
	def := all(t)
	r, err := def.With(nil, patterns)
	require.NoError(t, err)
	const text = "Write to ana.silva+work@example.co.uk; her SSN is 123-45-6789, not 987-65-43210."
	got, _ := def.Text(text)
	require.Equal(t, text, got, "not redacted by default")
	got, counts := r.Text(text)
	require.Equal(t, "Write to [redacted email]; her SSN is [redacted ssn], not 987-65-43210.", got)
	require.Equal(t, Counts{"pattern:email": 1, "pattern:ssn": 1}, counts)
}

// A transcript with every kind at once: each secret goes, the words around stay.
func TestTextReplacesEachSecretAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	keys := map[string]string{}
	for _, k := range redacttest.APIKeys(3) {
		keys[k.Name] = k.Text
	}
	text := fmt.Sprintf("Hi! My card is 4111 1111 1111 1111 and my IBAN is DE89 3704 0044 0532 0130 00. "+
		"Here is my OpenAI key %s and my AWS one %s; my password is s3cret-Pa55. I live in Lisbon.",
		keys["openai-project"], keys["aws-akia"])
	got, counts := all(t).Text(text)
	require.Equal(t, "Hi! My card is [redacted card number] and my IBAN is [redacted IBAN]. "+
		"Here is my OpenAI key [redacted API key] and my AWS one [redacted API key]; my password is [redacted password]. I live in Lisbon.", got)
	require.Equal(t, Counts{"card": 1, "iban": 1, "api_key": 2, "password": 1}, counts)
	require.Equal(t, 5, counts.Total())
	require.Equal(t, "api_key 2, card 1, iban 1, password 1", counts.String())

	// Fields redacts in place, and counts over every field.
	a, b := "card 4111111111111111", "nothing"
	require.Equal(t, Counts{"card": 1}, all(t).Fields(&a, &b))
	require.Equal(t, []string{"card [redacted card number]", "nothing"}, []string{a, b})
	require.Nil(t, all(t).Fields(&b))

	// Redacting again changes nothing: no placeholder is taken for a secret.
	again, more := all(t).Text(got)
	require.Equal(t, got, again)
	require.Nil(t, more)
}

// REDACT's kinds: the set chooses the detectors, none turns them all off.
func TestSetChoosesDetectors(t *testing.T) {
	t.Parallel()
	text := "card 4111111111111111, password: hunter22, IBAN NL91ABNA0417164300"
	for _, c := range []struct {
		set, want string
	}{
		{"all", "card [redacted card number], password: [redacted password], IBAN [redacted IBAN]"},
		{"card", "card [redacted card number], password: hunter22, IBAN NL91ABNA0417164300"},
		{" IBAN , password ", "card 4111111111111111, password: [redacted password], IBAN [redacted IBAN]"},
		{"none", text},
	} {
		set, err := ParseSet(c.set)
		require.NoError(t, err)
		r, err := New(set)
		require.NoError(t, err)
		got, _ := r.Text(text)
		require.Equal(t, c.want, got, c.set)
	}
	_, err := ParseSet("card,ssn")
	require.ErrorIs(t, err, ErrKinds)
	require.ErrorContains(t, err, `"ssn"`)
	set, err := ParseSet("password,card,card")
	require.NoError(t, err)
	require.Equal(t, Set{Card, Password}, set)
	require.Equal(t, "card,password", set.String())
	require.Equal(t, "all", All().String())
	require.Equal(t, "none", Set{}.String())
	off, err := New(Set{})
	require.NoError(t, err)
	require.True(t, off.Off())
}

// An operator's patterns: their placeholders name them, they count apart from the
// built-in kinds, and a pattern that cannot be used is refused with its reason.
func TestPatterns(t *testing.T) {
	t.Parallel()
	r, err := New(Set{Card}, Pattern{Name: "employee_id", Regex: `\bEMP-\d{6}\b`})
	require.NoError(t, err)
	got, counts := r.Text("I am EMP-123456, card 4111 1111 1111 1111")
	require.Equal(t, "I am [redacted employee id], card [redacted card number]", got)
	require.Equal(t, Counts{"pattern:employee_id": 1, "card": 1}, counts)

	// With keeps the kinds unless it is given others.
	base := all(t)
	same, err := base.With(nil, nil)
	require.NoError(t, err)
	require.Same(t, base, same)
	none := Set{}
	policy, err := base.With(&none, []Pattern{{Name: "ticket", Regex: `T-\d+`}})
	require.NoError(t, err)
	got, _ = policy.Text("T-42 for 4111 1111 1111 1111")
	require.Equal(t, "[redacted ticket] for 4111 1111 1111 1111", got)

	for _, c := range []struct {
		p    Pattern
		want string
	}{
		{Pattern{Name: "Bad Name", Regex: "x"}, "name"},
		{Pattern{Name: "card", Regex: ""}, "1 to 500 characters"},
		{Pattern{Name: "long", Regex: strings.Repeat("a", 501)}, "1 to 500 characters"},
		{Pattern{Name: "broken", Regex: "(a"}, "missing closing )"},
		{Pattern{Name: "empty", Regex: "a*"}, "matches empty text"},
		{Pattern{Name: "backref", Regex: `(a)\1`}, "invalid escape"},
		{Pattern{Name: "huge", Regex: strings.Repeat("a{1000}", 25)}, "instructions"},
	} {
		_, err := c.p.Compile()
		require.ErrorIs(t, err, ErrPattern, c.p.Name)
		require.ErrorContains(t, err, c.want, c.p.Name)
	}
	require.ErrorContains(t, CheckPatterns([]Pattern{{Name: "a", Regex: "x"}, {Name: "a", Regex: "y"}}), "named twice")
	many := make([]Pattern, MaxPatterns+1)
	for i := range many {
		many[i] = Pattern{Name: fmt.Sprintf("p%d", i), Regex: "x"}
	}
	require.ErrorContains(t, CheckPatterns(many), "the limit is 20")

	p, err := ParsePattern("order_ref=ORD-[0-9]{8}")
	require.NoError(t, err)
	require.Equal(t, Pattern{Name: "order_ref", Regex: "ORD-[0-9]{8}"}, p)
	_, err = ParsePattern("no-equals")
	require.ErrorContains(t, err, "NAME=REGEX")
}

// Overlapping secrets are one placeholder, counted as the one that starts first; a
// secret next to a placeholder is still found.
func TestOverlapsAndPlaceholders(t *testing.T) {
	t.Parallel()
	r, err := New(All(), Pattern{Name: "digits", Regex: `\d{4} \d{4}`})
	require.NoError(t, err)
	got, counts := r.Text("x 4111 1111 1111 1111 y")
	require.Equal(t, "x [redacted card number] y", got)
	require.Equal(t, Counts{"card": 1}, counts)

	got, counts = all(t).Text("[redacted card number] and 4111111111111111")
	require.Equal(t, "[redacted card number] and [redacted card number]", got)
	require.Equal(t, Counts{"card": 1}, counts)
	// A purge's placeholder is no password either.
	got, _ = all(t).Text("my password is [redacted]")
	require.Equal(t, "my password is [redacted]", got)
}

func TestLuhnAndMod97(t *testing.T) {
	t.Parallel()
	require.True(t, luhn([]byte("79927398713")))
	require.False(t, luhn([]byte("79927398710")))
	require.Equal(t, 1, mod97([]byte("GB82WEST12345698765432")))
	require.NotEqual(t, 1, mod97([]byte("GB83WEST12345698765432")))
}

func BenchmarkText(b *testing.B) {
	r, err := New(All())
	require.NoError(b, err)
	msg := strings.Repeat("I moved to Lisbon last month and started at a new company; the password is required. ", 4)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		r.Text(msg)
	}
}

// BenchmarkNew is the cost of a Redactor of every kind: gitleaks' rules and credo's,
// read and compiled, once per process (a policy's Redactor shares them).
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		_, err := New(All())
		require.NoError(b, err)
	}
}
