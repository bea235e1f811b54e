// Package pgretry runs again what PostgreSQL aborted to break a deadlock.
package pgretry

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Attempts bounds how often OnDeadlock runs fn.
const Attempts = 3

// deadlockDetected is PostgreSQL's SQLSTATE deadlock_detected.
const deadlockDetected = "40P01"

// OnDeadlock runs fn, again when PostgreSQL aborted it to break a deadlock, up to
// Attempts times, waiting a little longer before each new attempt. Any other error is
// returned at once. fn must be safe to run again: what the aborted transaction did was
// rolled back.
func OnDeadlock(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt == Attempts || !IsDeadlock(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// IsDeadlock reports whether err is, or wraps, PostgreSQL's deadlock_detected.
func IsDeadlock(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == deadlockDetected
}
