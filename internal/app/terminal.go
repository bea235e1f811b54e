package app

import (
	"io"
	"os"
)

// IsTerminal says whether w is a terminal, where a progress bar can redraw itself.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
