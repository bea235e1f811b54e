package transcript

import (
	"strconv"
	"strings"
)

// Error is one problem with an input. Its message reads
//
//	FILE: record N (line L): FIELD: PROBLEM
//
// leaving out what is empty or zero: File is empty for Validate's errors and
// for Parse called with the name ""; Record is 0 for problems with the input
// as a whole (e.g. "no records", or bytes after the closing "]"); Line is the
// line where the record starts, or for invalid JSON and invalid UTF-8 the line
// of the offending byte; Field is a path such as "messages[3].at", empty for
// problems with the record as a whole.
type Error struct {
	File    string
	Record  int // 1-based position of the record in the input, 0 for none
	Line    int // 1-based, 0 for unknown
	Field   string
	Problem string

	err error // the underlying error of a read error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	switch {
	case e.Record > 0:
		b.WriteString("record ")
		b.WriteString(strconv.Itoa(e.Record))
		if e.Line > 0 {
			b.WriteString(" (line ")
			b.WriteString(strconv.Itoa(e.Line))
			b.WriteByte(')')
		}
		b.WriteString(": ")
	case e.Line > 0:
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Unwrap returns the error of the reader for a read error, else nil.
func (e *Error) Unwrap() error { return e.err }

// MaxListed is how many problems Errors.Error lists before "and N more".
const MaxListed = 20

// Errors is the error Parse and Validate return: one or more problems, in
// input order. errors.As finds it, and also finds an *Error (the first).
type Errors []*Error

// Error lists the first MaxListed problems one per line, then "and N more".
func (es Errors) Error() string {
	if len(es) == 0 {
		return "no problems"
	}
	var b strings.Builder
	for i, e := range es {
		if i == MaxListed {
			b.WriteString("\nand ")
			b.WriteString(strconv.Itoa(len(es) - MaxListed))
			b.WriteString(" more")
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
