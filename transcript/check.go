package transcript

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInput is what every problem CheckScope and CheckText find is (errors.Is).
var ErrInput = errors.New("invalid input")

// InputError is input a front end must refuse: the field it names (as the surface calls
// it: scope, --scope, q; empty for the input as a whole) and what is wrong with it. It is
// the one invalid-input error of every package: CheckScope and CheckText return it, and
// memory and recall return it with their own Kind (memory.ErrInvalid, recall.ErrQuery).
// Each surface reads it with errors.As and shows Message in its own way: a 400, exit 2,
// an error page; no surface cuts a message out of another error's text.
type InputError struct {
	Field   string
	Problem string
	// Kind is the sentinel errors.Is finds besides ErrInput, and the start of Error's
	// text; nil is ErrInput.
	Kind error
}

// InputErrorf is an *InputError of kind (nil: ErrInput) about field, its problem
// formatted.
func InputErrorf(kind error, field, format string, args ...any) *InputError {
	return &InputError{Field: field, Problem: fmt.Sprintf(format, args...), Kind: kind}
}

func (e *InputError) Error() string { return e.kind().Error() + ": " + e.Message() }

// Message is the field and its problem, such as "scope contains a NUL character": what a
// user reads, however many errors wrap this one.
func (e *InputError) Message() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + " " + e.Problem
}

// Is reports ErrInput, and the error's Kind.
func (e *InputError) Is(target error) bool { return target == ErrInput || target == e.kind() }

func (e *InputError) kind() error {
	if e.Kind == nil {
		return ErrInput
	}
	return e.Kind
}

// InputMessage is the Message of the *InputError in err's chain, and ok says there is one.
func InputMessage(err error) (msg string, ok bool) {
	if e, ok := errors.AsType[*InputError](err); ok {
		return e.Message(), true
	}
	return "", false
}

// MaxQueryLen bounds a query or match text on every surface.
const MaxQueryLen = 2000

// CheckScope checks a scope named anywhere (the CLI, the API, MCP, the web UI) by the
// rule enqueue applies to a transcript's: valid UTF-8, no control character,
// bidirectional control or line separator, no white space around it, at most
// DefaultMaxScopeLen characters. A scope that could never have
// been stored is a clear error, not a query that fails in the database.
func CheckScope(name, scope string) error {
	if p := scopeProblem(scope, DefaultMaxScopeLen); p != "" {
		return &InputError{Field: name, Problem: p}
	}
	return nil
}

// CheckText checks free text a reader sends (a query, a match, a note): valid UTF-8, no
// NUL or other control character but newlines and tabs, no bidirectional control or
// line separator (as in a scope or a name), at most maxLen characters.
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
