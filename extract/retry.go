package extract

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/memory"
)

// ErrNotRetryable is returned by Retry for an episode that is not failed, or not of the
// scope named.
var ErrNotRetryable = errors.New("not a failed episode of this scope")

// Retry gives failed episode id of scope another go, in tx: it becomes pending with no
// attempts and no error, and the scope gets its extraction job unless it has one. The
// job extracts it in its turn, in conversation order with the scope's other pending
// episodes, so a retry never runs beside another extraction of the scope.
//
// Like Enqueue, Retry holds the scope's queue lock until tx ends: a job that is about to
// complete for want of pending episodes either sees this one or completes first.
func Retry(ctx context.Context, tx pgx.Tx, jobs Inserter, scope string, id int64) error {
	if err := lockQueues(ctx, tx, []string{scope}); err != nil {
		return err
	}
	retried, err := memory.RetryEpisodeTx(ctx, tx, scope, id)
	if err != nil {
		return err
	}
	if !retried {
		return fmt.Errorf("episode %d: %w", id, ErrNotRetryable)
	}
	if _, err := insertScopeJobs(ctx, tx, jobs, []string{scope}); err != nil {
		return fmt.Errorf("retry episode %d: %w", id, err)
	}
	return nil
}
