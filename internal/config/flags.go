package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit codes every command shares.
const (
	ExitFailed   = 1 // the command ran and failed
	ExitUsage    = 2 // bad usage, input or configuration: nothing was done
	ExitNotFound = 3 // no such belief, review item or scope
	// ExitInterrupted: a signal stopped the command before its work was done (a
	// `worker --drain` with episodes or jobs left); running it again finishes it.
	ExitInterrupted = 4
)

// ErrInterrupted is the error of a command a signal stopped with work left: it exits
// ExitInterrupted.
var ErrInterrupted = errors.New("interrupted")

// UsageError is bad usage, input or configuration: the command exits ExitUsage. It is
// the one usage error of every command; main finds it with errors.As (IsUsage).
type UsageError struct {
	Err error
	// Printed says the command has shown the usage already, and main adds nothing.
	Printed bool
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Usage is err as a UsageError, its text unchanged; nil stays nil.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return &UsageError{Err: err}
}

// IsUsage says whether err is bad usage, input or configuration.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// ParseFlags parses args into fs. A bad flag is one line that points to -h, not the
// whole usage and the error twice; -h prints the usage and returns flag.ErrHelp.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		if usage != nil {
			usage()
		} else {
			fmt.Fprintf(out, "usage of %s:\n", fs.Name())
			fs.PrintDefaults()
		}
		return err
	case err != nil:
		return &UsageError{Err: fmt.Errorf("%w (%s -h lists the flags)", err, fs.Name())}
	}
	return nil
}

// Checked is Check's error as a UsageError: a missing or bad setting is configuration.
func (c *Config) Checked(groups Group) error {
	if err := c.Check(groups); err != nil {
		return &UsageError{Err: err}
	}
	return nil
}
