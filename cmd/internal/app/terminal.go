package app

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IsTerminal says whether w is a terminal: a person who can answer a question or watch a
// progress bar redraw itself. A character device is not enough: /dev/null is one, and a
// question asked there reads nothing but its end. (Stdin qualifies too: an *os.File is a
// writer.)
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && term.IsTerminal(int(f.Fd()))
}
