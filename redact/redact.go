package redact

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Counts is how many secrets were redacted, by kind (a Kind, or a Pattern's CountKey).
type Counts map[string]int

// Add adds o to c, which must not be nil.
func (c Counts) Add(o Counts) {
	for k, n := range o {
		c[k] += n
	}
}

// Total is the number of secrets counted.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// String lists the counts as "kind N" in order of kind, "none" when empty.
func (c Counts) String() string {
	if len(c) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, k+" "+strconv.Itoa(c[k]))
	}
	return strings.Join(parts, ", ")
}

// Redactor replaces the secrets of a set of kinds, and the matches of an operator's
// patterns, with placeholders. It is safe for concurrent use.
type Redactor struct {
	set      Set
	patterns []compiled
	// ruleSet is the secret rules, compiled by New and shared by the Redactors With
	// derives; r runs those that find the kinds of set. Nil when set has none of their
	// kinds.
	ruleSet *ruleSet
}

type compiled struct {
	Pattern
	re *regexp.Regexp
}

// New returns a Redactor of the kinds of set and of patterns, which it checks. It
// compiles the secret rules (30 to 70 ms) when set has a kind they find: build one
// Redactor per process and derive the policies' from it (With).
func New(set Set, patterns ...Pattern) (*Redactor, error) {
	return build(set, patterns, nil)
}

// build is New, with the rules of rs when not nil.
func build(set Set, patterns []Pattern, rs *ruleSet) (*Redactor, error) {
	if err := CheckPatterns(patterns); err != nil {
		return nil, err
	}
	r := &Redactor{set: normalize(set)}
	for _, p := range patterns {
		re, _ := p.Compile() // checked above
		r.patterns = append(r.patterns, compiled{Pattern: p, re: re})
	}
	if !r.set.Has(APIKey) && !r.set.Has(Token) && !r.set.Has(PrivateKey) && !r.set.Has(Password) {
		return r, nil
	}
	if rs == nil {
		var err error
		if rs, err = loadRules(); err != nil {
			return nil, err
		}
	}
	r.ruleSet = rs
	return r, nil
}

// Set is the kinds r redacts.
func (r *Redactor) Set() Set { return slices.Clone(r.set) }

// Off says whether r redacts nothing.
func (r *Redactor) Off() bool { return len(r.set) == 0 && len(r.patterns) == 0 }

// With is a Redactor of the kinds of set (r's own when nil) and of patterns: an
// organisation's policy over the deployment's default. It shares r's compiled rules.
func (r *Redactor) With(set *Set, patterns []Pattern) (*Redactor, error) {
	kinds := r.set
	if set != nil {
		kinds = *set
	}
	if set == nil && len(patterns) == 0 {
		return r, nil
	}
	return build(kinds, patterns, r.ruleSet)
}

// Fields redacts each of fields in place, as Text does, and returns how many of each
// kind it replaced over all of them (nil when none).
func (r *Redactor) Fields(fields ...*string) Counts {
	var counts Counts
	for _, f := range fields {
		text, c := r.Text(*f)
		if c == nil {
			continue
		}
		if counts == nil {
			counts = Counts{}
		}
		*f = text
		counts.Add(c)
	}
	return counts
}

// span is one secret found: where it is and what counts it.
type span struct {
	start, end int
	key        string // the key of Counts
	text       string // the placeholder
}

// placeholders are the placeholders already in a text, this package's and a purge's
// ("[redacted]"): nothing is found inside one, so that redacting twice changes
// nothing.
var placeholders = regexp.MustCompile(`\[redacted[^\]\n]{0,60}\]`)

// Text returns s with each secret replaced by its placeholder, and how many of each
// kind it replaced (nil when none). Secrets that overlap are replaced as one, counted
// as the one that starts first (the longest, of those that start together).
func (r *Redactor) Text(s string) (string, Counts) {
	spans := r.find(s)
	if len(spans) == 0 {
		return s, nil
	}
	counts := Counts{}
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		end := cur.end
		for i++; i < len(spans) && spans[i].start < end; i++ {
			end = max(end, spans[i].end)
		}
		b.WriteString(s[last:cur.start])
		b.WriteString(cur.text)
		counts[cur.key]++
		last = end
	}
	b.WriteString(s[last:])
	return b.String(), counts
}

// find is every secret of s, ordered by start, the longest first.
func (r *Redactor) find(s string) []span {
	if r.Off() || s == "" {
		return nil
	}
	var spans []span
	adder := func(key, text string) func(int, int) {
		return func(start, end int) { spans = append(spans, span{start, end, key, text}) }
	}
	lowerBytes := asciiLower(s)
	lower := string(lowerBytes)
	if r.set.Has(Card) {
		findCards(s, adder(string(Card), Placeholder(Card)))
	}
	if r.set.Has(IBAN) {
		findIBANs(s, adder(string(IBAN), Placeholder(IBAN)))
	}
	if r.ruleSet != nil {
		for _, i := range r.ruleSet.triggered(lowerBytes) {
			if rule := &r.ruleSet.rules[i]; r.set.Has(rule.kind) {
				rule.find(s, r.ruleSet.global, adder(string(rule.kind), Placeholder(rule.kind)))
			}
		}
	}
	if r.set.Has(Token) {
		findBearers(s, lower, adder(string(Token), Placeholder(Token)))
	}
	if r.set.Has(Password) {
		findPasswords(s, lower, adder(string(Password), Placeholder(Password)))
	}
	for _, p := range r.patterns {
		add := adder(p.CountKey(), p.Placeholder())
		for _, m := range p.re.FindAllStringIndex(s, -1) {
			add(m[0], m[1])
		}
	}
	if len(spans) == 0 {
		return nil
	}
	// Nothing inside a placeholder is a secret.
	kept := spans[:0]
	marks := placeholders.FindAllStringIndex(s, -1)
	for _, sp := range spans {
		if sp.end > sp.start && !slices.ContainsFunc(marks, func(m []int) bool { return sp.start < m[1] && m[0] < sp.end }) {
			kept = append(kept, sp)
		}
	}
	// Stable: of two finds of one span, the first detector's kind counts.
	slices.SortStableFunc(kept, func(a, b span) int { return cmp.Or(a.start-b.start, b.end-a.end) })
	return kept
}

// asciiLower is s with its ASCII letters in lower case: byte for byte as long as s, so
// that an offset in one is an offset in the other (strings.ToLower may change lengths).
func asciiLower(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// defaultRedactor is Default's, made once: a Redactor is never changed.
var defaultRedactor = sync.OnceValue(func() *Redactor {
	r, err := New(All())
	if err != nil {
		panic(err) // gitleaks' embedded rules do not load: a build defect, which every test finds
	}
	return r
})

// Default is the Redactor of every kind, without patterns: REDACT's default.
func Default() *Redactor { return defaultRedactor() }
