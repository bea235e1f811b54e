package app

import (
	"os"

	"golang.org/x/term"
)

// IsTerminal says whether f is a terminal: a person who can answer a question or watch a
// progress bar redraw itself. A character device is not enough: /dev/null is one, and a
// question asked there reads nothing but its end.
func IsTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(int(f.Fd()))
}
