package transcript

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInput wraps every problem CheckScope and CheckText find.
var ErrInput = errors.New("invalid input")

// MaxQueryLen bounds a query or match text on every surface.
const MaxQueryLen = 2000

// CheckScope checks a scope named anywhere (the CLI, the API, MCP, the web UI) by the
// rule enqueue applies to a transcript's: valid UTF-8, no control character, no white
// space around it, at most DefaultMaxScopeLen characters. A scope that could never have
// been stored is a clear error, not a query that fails in the database.
func CheckScope(name, scope string) error {
	if p := scopeProblem(scope, DefaultMaxScopeLen); p != "" {
		return fmt.Errorf("%w: %s %s", ErrInput, name, p)
	}
	return nil
}

// CheckText checks free text a reader sends (a query, a match, a note): valid UTF-8, no
// NUL or other control character but newlines and tabs, at most maxLen characters.
func CheckText(name, s string, maxLen int) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInput, name)
	case strings.ContainsRune(s, 0):
		return fmt.Errorf("%w: %s contains a NUL character", ErrInput, name)
	}
	if p := controlProblem(strings.NewReplacer("\n", "", "\r", "", "\t", "").Replace(s)); p != "" {
		return fmt.Errorf("%w: %s %s", ErrInput, name, p)
	}
	if p := lengthProblem(s, maxLen); p != "" {
		return fmt.Errorf("%w: %s %s", ErrInput, name, p)
	}
	return nil
}
