package redact

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Bounds of an operator's patterns.
const (
	// MaxPatterns is how many patterns one policy may have.
	MaxPatterns = 20
	// MaxPatternLen bounds a pattern's expression, in characters.
	MaxPatternLen = 500
	// MaxNameLen bounds a pattern's name.
	MaxNameLen = 40
	// maxProgram bounds the compiled size of a pattern, in instructions: an expression
	// of 500 characters can still repeat itself into a program of millions.
	maxProgram = 20_000
)

// Pattern is an operator's own kind of secret: a name, which its placeholder says
// ("[redacted employee id]" for employee_id), and a regular expression in Go's RE2
// syntax, which runs in time linear in the text.
type Pattern struct {
	Name  string `json:"name"`
	Regex string `json:"regex"`
}

// ErrPattern is the error of a pattern that cannot be used.
var ErrPattern = errors.New("invalid pattern")

// CountKey is the key of the pattern's redactions in Counts: its name after
// "pattern:", so that no name can be taken for a built-in kind.
func (p Pattern) CountKey() string { return "pattern:" + p.Name }

// Placeholder is what replaces a match of the pattern.
func (p Pattern) Placeholder() string {
	return "[redacted " + strings.ReplaceAll(p.Name, "_", " ") + "]"
}

// Compile checks the pattern and compiles it: a name of lower-case letters, digits and
// underscores starting with a letter, at most MaxNameLen long; an expression of at most
// MaxPatternLen characters that Go's regexp compiles to at most maxProgram instructions
// and that matches no empty text (it would redact between every two characters).
func (p Pattern) Compile() (*regexp.Regexp, error) {
	if !validName(p.Name) {
		return nil, fmt.Errorf("%w: name %q: use 1 to %d lower-case letters, digits and underscores, starting with a letter",
			ErrPattern, p.Name, MaxNameLen)
	}
	if n := utf8.RuneCountInString(p.Regex); n == 0 || n > MaxPatternLen || !utf8.ValidString(p.Regex) {
		return nil, fmt.Errorf("%w: %s: the expression must be valid UTF-8 of 1 to %d characters", ErrPattern, p.Name, MaxPatternLen)
	}
	parsed, err := syntax.Parse(p.Regex, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPattern, p.Name, err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPattern, p.Name, err)
	}
	if len(prog.Inst) > maxProgram {
		return nil, fmt.Errorf("%w: %s: the expression compiles to %d instructions; the limit is %d", ErrPattern, p.Name,
			len(prog.Inst), maxProgram)
	}
	re, err := regexp.Compile(p.Regex)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPattern, p.Name, err)
	}
	if re.MatchString("") {
		return nil, fmt.Errorf("%w: %s: the expression matches empty text", ErrPattern, p.Name)
	}
	return re, nil
}

// ParsePattern reads NAME=REGEX, as --redact-pattern gives it, and checks it.
func ParsePattern(s string) (Pattern, error) {
	name, re, ok := strings.Cut(s, "=")
	if !ok {
		return Pattern{}, fmt.Errorf("%w: %q: write NAME=REGEX", ErrPattern, s)
	}
	p := Pattern{Name: strings.TrimSpace(name), Regex: re}
	_, err := p.Compile()
	return p, err
}

// CheckPatterns checks a policy's patterns: each as Compile does, at most MaxPatterns,
// no name twice.
func CheckPatterns(ps []Pattern) error {
	if len(ps) > MaxPatterns {
		return fmt.Errorf("%w: %d patterns; the limit is %d", ErrPattern, len(ps), MaxPatterns)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.Name] {
			return fmt.Errorf("%w: %s is named twice", ErrPattern, p.Name)
		}
		seen[p.Name] = true
		if _, err := p.Compile(); err != nil {
			return err
		}
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > MaxNameLen || !isLetter(s[0]) || s[0] < 'a' {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < 'a' || c > 'z') && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}
