package eval

import (
	"strings"
	"unicode"

	"github.com/credohq/credo/memory"
)

// Normalize lowercases s and turns every run of characters that are not letters or
// digits into one space: "User's city: New-York." is "user s city new york". Phrases
// match statements as whole words of this form.
func Normalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

// contains reports whether normalized text holds phrase as whole words.
func contains(text, phrase string) bool {
	p := Normalize(phrase)
	return p != "" && strings.Contains(" "+text+" ", " "+p+" ")
}

// Statement reports whether a statement (and its attribute) is one m selects.
func (m Match) Statement(statement, attribute string) bool {
	if m.Attribute != "" && !contains(Normalize(attribute), m.Attribute) {
		return false
	}
	text := Normalize(statement)
	for _, p := range m.AllOf {
		if !contains(text, p) {
			return false
		}
	}
	if len(m.AnyOf) > 0 && !anyOf(text, m.AnyOf) {
		return false
	}
	for _, p := range m.NoneOf {
		if contains(text, p) {
			return false
		}
	}
	return true
}

// Belief reports whether m selects b.
func (m Match) Belief(b memory.Belief) bool { return m.Statement(b.Statement, b.Attribute) }

func anyOf(text string, phrases []string) bool {
	for _, p := range phrases {
		if contains(text, p) {
			return true
		}
	}
	return false
}

// String is m in a short readable form, for reports: [new york|brooklyn] -[moved]
// @location (temporal).
func (m Match) String() string {
	var parts []string
	parts = append(parts, m.AllOf...)
	if len(m.AnyOf) > 0 {
		parts = append(parts, "["+strings.Join(m.AnyOf, "|")+"]")
	}
	if len(m.NoneOf) > 0 {
		parts = append(parts, "-["+strings.Join(m.NoneOf, "|")+"]")
	}
	if m.Attribute != "" {
		parts = append(parts, "@"+m.Attribute)
	}
	if m.Reason != "" {
		parts = append(parts, "("+m.Reason+")")
	}
	return strings.Join(parts, " ")
}
