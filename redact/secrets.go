package redact

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/spf13/viper"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"
)

//go:embed rules.toml
var credoRules string

// excludedRules are the rules of gitleaks' default configuration redaction does not run,
// each with the reason: in a conversation they take ordinary words for secrets.
func excludedRules() map[string]string {
	return map[string]string{
		// Any word of 10 or more characters after "key", "token", "auth", "access",
		// "secret" or "password" and a colon: it takes a setting
		// (credential.helper=osxkeychain-2024) for a key and a password given as such
		// for an API key, and its expression costs 0.14 ms on each message holding one
		// of those words, where a message's whole redaction costs about 1 µs. The
		// credentials it exists for, given by their names in a conversation, have rules
		// of their own (rules.toml, the password detector).
		"generic-api-key": "takes settings for keys, and costs 100 times the rest",
	}
}

// secretRule is one rule of gitleaks' format, as redaction runs it.
type secretRule struct {
	id   string
	kind Kind
	re   *regexp.Regexp
	// group is the capture group holding the secret: 0 for the first non-empty one,
	// or the whole match when there is none.
	group int
	// entropy is the Shannon entropy, in bits per character, a secret must exceed.
	entropy float64
	allow   []*gitleaks.Allowlist
}

// ruleSet is the rules, with the automaton that finds their keywords in one pass. It is
// made once per Redactor built by New, and shared by those With derives from it: its
// 224 expressions take 30 to 70 ms to compile and keep 5.8 MB.
type ruleSet struct {
	rules []secretRule
	// keywords are the rules' keywords, in lower case; byKeyword[k] the indexes in
	// rules of those keywords[k] is one of. A text holding none of a rule's keywords,
	// ignoring case, is not searched: most texts wake a handful of rules.
	keywords  []string
	byKeyword [][]int
	// always are the rules without keywords, run on every text (none of gitleaks'
	// default rules, as of 8.30).
	always []int
	trie   *ahocorasick.Trie
	// global is the configuration's allowlist for every rule: "true", "null",
	// "${VAR}", a run of one letter.
	global []*gitleaks.Allowlist
}

// triggered is the indexes in rs.rules, in order, of the rules whose keywords lower
// holds, and of those without keywords.
func (rs *ruleSet) triggered(lower []byte) []int {
	out := slices.Clone(rs.always)
	rs.trie.Walk(lower, func(_, _, pattern int64) bool {
		for _, i := range rs.byKeyword[pattern] {
			if !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
		return true
	})
	slices.Sort(out)
	return out
}

// loadRules reads gitleaks' default configuration, less excludedRules, and credo's own
// rules in the same format (rules.toml: the credentials a conversation gives that
// gitleaks has no rule for), as gitleaks reads a configuration, and compiles them.
func loadRules() (*ruleSet, error) {
	def, err := readConfig(gitleaks.DefaultConfig)
	if err != nil {
		return nil, fmt.Errorf("redact: read gitleaks' rules: %w", err)
	}
	own, err := readConfig(credoRules)
	if err != nil {
		return nil, fmt.Errorf("redact: read rules.toml: %w", err)
	}
	excluded := excludedRules()
	rs := &ruleSet{global: def.Allowlists}
	for _, cfg := range []gitleaks.Config{def, own} {
		for _, id := range cfg.OrderedRules {
			r := cfg.Rules[id]
			// A rule with a path finds secrets only in the files its path matches (a
			// Terraform file's passwords): a conversation is no file.
			if _, ok := excluded[id]; ok || r.Regex == nil || r.Path != nil || r.SkipReport {
				continue
			}
			n := len(rs.rules)
			rs.rules = append(rs.rules, secretRule{id: id, kind: ruleKind(r), re: r.Regex, group: r.SecretGroup, entropy: r.Entropy, allow: r.Allowlists})
			if len(r.Keywords) == 0 {
				rs.always = append(rs.always, n)
			}
			for _, k := range r.Keywords {
				i := slices.Index(rs.keywords, k)
				if i < 0 {
					i = len(rs.keywords)
					rs.keywords = append(rs.keywords, k)
					rs.byKeyword = append(rs.byKeyword, nil)
				}
				rs.byKeyword[i] = append(rs.byKeyword[i], n)
			}
		}
	}
	rs.trie = ahocorasick.NewTrieBuilder().AddStrings(rs.keywords).Build()
	return rs, nil
}

// readConfig reads a configuration of gitleaks' format, with a viper of its own: the
// package-level viper gitleaks' own loaders use is shared by the whole process.
func readConfig(toml string) (gitleaks.Config, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(toml)); err != nil {
		return gitleaks.Config{}, err
	}
	var vc gitleaks.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return gitleaks.Config{}, err
	}
	return vc.Translate()
}

// ruleKind is the kind of the secrets a rule finds: a password for credo's rules tagged
// so (a URL's password) and a curl command's user; a token for a JWT and a curl
// command's Authorization header; a private key for PEM armour; an API key for the rest
// (the keys and tokens of some 200 providers).
func ruleKind(r gitleaks.Rule) Kind {
	switch {
	case slices.Contains(r.Tags, "password") || r.RuleID == "curl-auth-user":
		return Password
	case r.RuleID == "jwt" || r.RuleID == "jwt-base64" || r.RuleID == "curl-auth-header":
		return Token
	case r.RuleID == "private-key":
		return PrivateKey
	}
	return APIKey
}

// find reports the secrets rule r finds in s: the span of the secret, not of the whole
// match, which may hold the text around it. global is the allowlist of every rule.
func (r *secretRule) find(s string, global []*gitleaks.Allowlist, add func(start, end int)) {
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
		match, line := s[m[0]:m[1]], lineAround(s, m[0], m[1])
		if allowed(global, secret, match, line) || allowed(r.allow, secret, match, line) {
			continue
		}
		add(start, tokenEnd(s, start, end))
	}
}

// tokenEnd is where the secret s[start:end] ends: end, or, when a rule's expression
// stops inside a run of a token's characters (GitLab's "glpat-" and 20 characters, a
// format since grown longer), the end of that run, which is the rest of the key.
func tokenEnd(s string, start, end int) int {
	if end == start || !isTokenByte(s[end-1]) {
		return end
	}
	for end < len(s) && isTokenByte(s[end]) {
		end++
	}
	return end
}

func isTokenByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

// allowed is gitleaks' allowlist check of a finding: an allowlist lets through a secret
// (or its match, or its line, as the allowlist says) its expressions match or that
// holds one of its stop words, e.g. AWS's documented example key.
func allowed(allowlists []*gitleaks.Allowlist, secret, match, line string) bool {
	for _, a := range allowlists {
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
