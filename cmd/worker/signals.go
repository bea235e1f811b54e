package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/memory"
)

// signalError is the cause of a run's context that a signal canceled.
type signalError struct{ sig os.Signal }

func (s *signalError) Error() string { return "stopped by " + signalName(s.sig) }

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// watchSignals stops the run softly on the first signal (stop: running jobs finish
// within SHUTDOWN_TIMEOUT) and at once on the second (now closes: running jobs are
// canceled and handed back). It says so each time: a Ctrl-C that seems ignored gets
// pressed again, or the process killed. It returns when done closes.
func watchSignals(signals <-chan os.Signal, logger *slog.Logger, stop context.CancelCauseFunc, now chan<- struct{}, done <-chan struct{}) {
	select {
	case s := <-signals:
		stop(&signalError{sig: s})
		logger.Info("stopping: running jobs finish first; a second signal stops at once", "signal", signalName(s))
	case <-done:
		return
	}
	select {
	case s := <-signals:
		logger.Warn("stopping at once: running jobs are canceled and handed back", "signal", signalName(s))
		close(now)
	case <-done:
	}
}

// drainOutcome is a stopped drain run's error: ErrInterrupted when episodes or jobs are
// left (so that a script tells it from a finished drain), nil when the work got done
// anyway, and never the cancellation itself. err is the run's error, whose context
// errors the stop caused; store and jobs are nil when the stop came before they
// existed.
func drainOutcome(cause error, err error, jobs *river.Client[pgx.Tx], store *memory.Store) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	if store == nil || jobs == nil {
		return errors.Join(err, fmt.Errorf("%w (%s) before the drain began", config.ErrInterrupted, cause.Error()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	left, lerr := riverjobs.AnyUnfinished(ctx, jobs)
	b, berr := store.Backlog(ctx)
	if lerr != nil || berr != nil {
		return errors.Join(err, fmt.Errorf("%w (%s), and what is left is unknown: %w", config.ErrInterrupted, cause.Error(), errors.Join(lerr, berr)))
	}
	if !left && b.Pending == 0 {
		return err
	}
	return errors.Join(err, fmt.Errorf("%w (%s) with work left: %d episodes pending; run it again to finish",
		config.ErrInterrupted, cause.Error(), b.Pending))
}
