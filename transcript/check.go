package transcript

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// ErrInput is what every problem CheckScope and CheckText find is (errors.Is).
var ErrInput = errors.New("invalid input")

// InputError is a problem CheckScope or CheckText found: the field it names (as the
// surface calls it: scope, --scope, q) and what is wrong with it. Each surface shows
// Message in its own way: a 400, exit 2, an error page.
type InputError struct {
	Field   string
	Problem string
}

func (e *InputError) Error() string { return ErrInput.Error() + ": " + e.Message() }

// Message is the field and its problem, such as "scope contains a NUL character".
func (e *InputError) Message() string { return e.Field + " " + e.Problem }

func (e *InputError) Is(target error) bool { return target == ErrInput }

// InputMessage is err's Message when it is an *InputError, and ok says so.
func InputMessage(err error) (msg string, ok bool) {
	var e *InputError
	if errors.As(err, &e) {
		return e.Message(), true
	}
	return "", false
}

// MaxQueryLen bounds a query or match text on every surface.
const MaxQueryLen = 2000

// CheckScope checks a scope named anywhere (the CLI, the API, MCP, the web UI) by the
// rule enqueue applies to a transcript's: valid UTF-8, no control character, no white
// space around it, at most DefaultMaxScopeLen characters. A scope that could never have
// been stored is a clear error, not a query that fails in the database.
func CheckScope(name, scope string) error {
	if p := scopeProblem(scope, DefaultMaxScopeLen); p != "" {
		return &InputError{Field: name, Problem: p}
	}
	return nil
}

// CheckText checks free text a reader sends (a query, a match, a note): valid UTF-8, no
// NUL or other control character but newlines and tabs, at most maxLen characters.
func CheckText(name, s string, maxLen int) error {
	switch {
	case !utf8.ValidString(s):
		return &InputError{Field: name, Problem: "is not valid UTF-8"}
	case strings.ContainsRune(s, 0):
		return &InputError{Field: name, Problem: "contains a NUL character"}
	}
	if p := controlProblem(strings.NewReplacer("\n", "", "\r", "", "\t", "").Replace(s)); p != "" {
		return &InputError{Field: name, Problem: p}
	}
	if p := lengthProblem(s, maxLen); p != "" {
		return &InputError{Field: name, Problem: p}
	}
	return nil
}
