package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// ExitCode is the exit code every command shares for the error its run returned, which
// it prints on stderr as "name: err": 0 for none and for -h (flag.ErrHelp), ExitUsage
// for bad usage, ExitNotFound for an error that is one of notFound, ExitInterrupted for
// ErrInterrupted, ExitFailed for the rest. A UsageError that is Printed already is not
// printed again.
func ExitCode(name string, err error, stderr io.Writer, notFound ...error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if u, ok := errors.AsType[*UsageError](err); ok {
		if !u.Printed {
			fmt.Fprintln(stderr, name+":", err)
		}
		return ExitUsage
	}
	fmt.Fprintln(stderr, name+":", err)
	if errors.Is(err, ErrInterrupted) {
		return ExitInterrupted
	}
	for _, target := range notFound {
		if errors.Is(err, target) {
			return ExitNotFound
		}
	}
	return ExitFailed
}
