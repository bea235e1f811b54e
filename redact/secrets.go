package redact

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/spf13/viper"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"
)

// secretRules are the rules of gitleaks' default configuration that find the API keys,
// tokens and private keys people paste into a conversation, by kind. Its other rules
// (some 200) find credentials of services a conversation rarely holds, or, like
// generic-api-key, any long word after "key" or "token" in source code: in a chat they
// would take order numbers for secrets.
var secretRules = map[string]Kind{
	"openai-api-key":               APIKey,
	"anthropic-api-key":            APIKey,
	"anthropic-admin-api-key":      APIKey,
	"aws-access-token":             APIKey,
	"github-pat":                   APIKey,
	"github-oauth":                 APIKey,
	"github-app-token":             APIKey,
	"github-fine-grained-pat":      APIKey,
	"github-refresh-token":         APIKey,
	"slack-bot-token":              APIKey,
	"slack-user-token":             APIKey,
	"slack-app-token":              APIKey,
	"slack-config-access-token":    APIKey,
	"slack-config-refresh-token":   APIKey,
	"slack-legacy-bot-token":       APIKey,
	"slack-legacy-token":           APIKey,
	"slack-legacy-workspace-token": APIKey,
	"slack-webhook-url":            APIKey,
	"stripe-access-token":          APIKey,
	"gcp-api-key":                  APIKey,
	"jwt":                          Token,
	"private-key":                  PrivateKey,
}

// secretRule is one of gitleaks' rules, as redaction runs it.
type secretRule struct {
	id   string
	kind Kind
	re   *regexp.Regexp
	// group is the capture group holding the secret: 0 for the first non-empty one,
	// or the whole match when there is none.
	group int
	// entropy is the Shannon entropy, in bits per character, a secret must exceed.
	entropy float64
	// keywords are the indexes in ruleSet.keywords of the rule's keywords: a text
	// holding none of them, ignoring case, is not searched.
	keywords []int
	allow    []*gitleaks.Allowlist
}

// ruleSet is the rules, with the automaton that finds their keywords in one pass.
type ruleSet struct {
	rules    []secretRule
	keywords []string
	trie     *ahocorasick.Trie
}

// present marks which keywords lower holds.
func (rs *ruleSet) present(lower []byte) []bool {
	seen := make([]bool, len(rs.keywords))
	rs.trie.Walk(lower, func(_, _, pattern int64) bool {
		seen[pattern] = true
		return true
	})
	return seen
}

// loadSecretRules reads gitleaks' default configuration once per process: its 222
// expressions take some 90 ms to compile.
var loadSecretRules = sync.OnceValues(func() (*ruleSet, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(gitleaks.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("redact: read gitleaks' rules: %w", err)
	}
	var vc gitleaks.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("redact: read gitleaks' rules: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("redact: read gitleaks' rules: %w", err)
	}
	rs := &ruleSet{}
	for _, id := range cfg.OrderedRules {
		kind, ok := secretRules[id]
		if !ok {
			continue
		}
		r := cfg.Rules[id]
		rule := secretRule{id: id, kind: kind, re: r.Regex, group: r.SecretGroup, entropy: r.Entropy, allow: r.Allowlists}
		for _, k := range r.Keywords {
			i := slices.Index(rs.keywords, k)
			if i < 0 {
				i = len(rs.keywords)
				rs.keywords = append(rs.keywords, k)
			}
			rule.keywords = append(rule.keywords, i)
		}
		rs.rules = append(rs.rules, rule)
	}
	if len(rs.rules) != len(secretRules) {
		return nil, fmt.Errorf("redact: gitleaks' configuration has %d of the %d rules redaction uses", len(rs.rules), len(secretRules))
	}
	rs.trie = ahocorasick.NewTrieBuilder().AddStrings(rs.keywords).Build()
	return rs, nil
})

// find reports the secrets rule r finds in s, which holds the keywords seen: the span of
// the secret, not of the whole match, which may hold the text around it.
func (r *secretRule) find(s string, seen []bool, add func(start, end int)) {
	if len(r.keywords) > 0 && !slices.ContainsFunc(r.keywords, func(k int) bool { return seen[k] }) {
		return
	}
	for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
		start, end := m[0], m[1]
		switch {
		case r.group > 0 && 2*r.group+1 < len(m) && m[2*r.group] >= 0:
			start, end = m[2*r.group], m[2*r.group+1]
		case r.group == 0:
			for g := 1; 2*g+1 < len(m); g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					start, end = m[2*g], m[2*g+1]
					break
				}
			}
		}
		secret := s[start:end]
		if r.entropy > 0 && entropy(secret) <= r.entropy {
			continue
		}
		if r.allowed(secret, s[m[0]:m[1]], lineAround(s, m[0], m[1])) {
			continue
		}
		add(start, end)
	}
}

// allowed is gitleaks' allowlist check of a finding: a rule's allowlist lets through a
// secret (or its match, or its line, as the allowlist says) its expressions match or
// that holds one of its stop words, e.g. AWS's documented example key.
func (r *secretRule) allowed(secret, match, line string) bool {
	for _, a := range r.allow {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		regexAllowed := a.RegexAllowed(target)
		stopWord, _ := a.ContainsStopWord(secret)
		if a.MatchCondition == gitleaks.AllowlistMatchAnd {
			var checks []bool
			if len(a.Regexes) > 0 {
				checks = append(checks, regexAllowed)
			}
			if len(a.StopWords) > 0 {
				checks = append(checks, stopWord)
			}
			// Commits and paths, which a conversation has none of, never match.
			if len(checks) > 0 && len(a.Commits) == 0 && len(a.Paths) == 0 && !containsFalse(checks) {
				return true
			}
			continue
		}
		if regexAllowed || stopWord {
			return true
		}
	}
	return false
}

func containsFalse(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return true
		}
	}
	return false
}

// lineAround is the line of s holding s[start:end].
func lineAround(s string, start, end int) string {
	lo := strings.LastIndexByte(s[:start], '\n') + 1
	hi := strings.IndexByte(s[end:], '\n')
	if hi < 0 {
		return s[lo:]
	}
	return s[lo : end+hi]
}

// entropy is the Shannon entropy of s in bits per character, as gitleaks computes it.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	var h float64
	for _, n := range counts {
		f := float64(n) / float64(len(s))
		h -= f * math.Log2(f)
	}
	return h
}

// bearer finds a bearer token, as an Authorization header or a sentence gives it:
// "Bearer" then a token of at least 16 characters of the token alphabet (RFC 6750).
// gitleaks finds one only in a curl command.
var bearer = regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)`)

// findBearers reports the token of each bearer credential of s whose entropy shows a
// random string, not a long word.
func findBearers(s, lower string, add func(start, end int)) {
	if !strings.Contains(lower, "bearer") {
		return
	}
	for _, m := range bearer.FindAllStringSubmatchIndex(s, -1) {
		if tok := s[m[2]:m[3]]; entropy(tok) > 3 && strings.ContainsAny(tok, "0123456789") {
			add(m[2], m[3])
		}
	}
}
