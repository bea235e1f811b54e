// Package redact finds secrets in text and replaces each with a typed placeholder
// ("[redacted card number]"), before a transcript is stored or shown to a model and
// before a model's facts are stored.
//
// The detectors are of six kinds (Kind): payment card numbers (13 to 19 digits, spaces
// or hyphens between groups, a card network's prefix and length, Luhn-valid), IBANs
// (a country's length, mod-97), API keys and tokens of some 200 providers, tokens (JWTs,
// bearer tokens), PEM private keys, and passwords given as such ("my password is ...",
// "pwd: ...", a URL's "user:password@"). The keys, JWTs, private keys and a URL's
// password are found by the rules of gitleaks' default configuration, less those in
// excludedRules, and by credo's own in the same format (rules.toml), run as gitleaks
// runs them: its keywords, regular expression, secret group, entropy floor and
// allowlists. An operator's own patterns (Pattern, Go's RE2 syntax) are redacted
// likewise. Emails and national identity numbers are no kind: an operator who must
// redact them gives a pattern.
//
// What a Redactor replaces is counted per kind (Counts), never kept.
package redact

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kind is a kind of secret a built-in detector finds; REDACT names kinds.
type Kind string

// The built-in kinds, in the order REDACT lists them.
const (
	Card       Kind = "card"
	IBAN       Kind = "iban"
	APIKey     Kind = "api_key"
	Token      Kind = "token"
	PrivateKey Kind = "private_key"
	Password   Kind = "password"
)

// AllKinds is every built-in kind, in order.
func AllKinds() []Kind { return []Kind{Card, IBAN, APIKey, Token, PrivateKey, Password} }

// Placeholder is what replaces a secret of kind k.
func Placeholder(k Kind) string {
	switch k {
	case Card:
		return "[redacted card number]"
	case IBAN:
		return "[redacted IBAN]"
	case APIKey:
		return "[redacted API key]"
	case Token:
		return "[redacted token]"
	case PrivateKey:
		return "[redacted private key]"
	case Password:
		return "[redacted password]"
	}
	return "[redacted " + string(k) + "]"
}

// ErrKinds is the error of a list of kinds that names an unknown one: a *KindError.
var ErrKinds = errors.New("unknown kind of secret")

// KindError is a list of kinds naming one that is not a kind: its message is the
// user's, whichever flag or field gave the list.
type KindError struct {
	Name string
}

func (e *KindError) Error() string {
	return fmt.Sprintf("%q is not a kind of secret; the kinds are %s, or all, or none", e.Name, All())
}

// Is makes a *KindError ErrKinds.
func (e *KindError) Is(target error) bool { return target == ErrKinds }

// Set is a set of kinds, in AllKinds' order; empty is redaction off.
type Set []Kind

// All is the set of every built-in kind, the default.
func All() Set { return AllKinds() }

// ParseSet reads a list of kinds as REDACT and --redact give it: "all" (or empty) is
// every kind, "none" is none, else kinds separated by commas ("card,iban").
func ParseSet(s string) (Set, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "", "all":
		return All(), nil
	case "none":
		return Set{}, nil
	}
	var out Set
	for part := range strings.SplitSeq(s, ",") {
		k := Kind(strings.TrimSpace(part))
		if !slices.Contains(AllKinds(), k) {
			return nil, &KindError{Name: strings.TrimSpace(part)}
		}
		out = append(out, k)
	}
	return normalize(out), nil
}

// normalize sorts kinds in AllKinds' order and drops repeats.
func normalize(kinds []Kind) Set {
	out := Set{}
	for _, k := range AllKinds() {
		if slices.Contains(kinds, k) {
			out = append(out, k)
		}
	}
	return out
}

// String is s as ParseSet reads it: "all", "none" or the kinds joined by commas.
func (s Set) String() string {
	switch {
	case len(s) == 0:
		return "none"
	case len(normalize(s)) == len(AllKinds()):
		return "all"
	}
	parts := make([]string, len(s))
	for i, k := range s {
		parts[i] = string(k)
	}
	return strings.Join(parts, ",")
}

// Has says whether s holds k.
func (s Set) Has(k Kind) bool { return slices.Contains(s, k) }
