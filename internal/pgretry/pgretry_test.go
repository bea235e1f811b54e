package pgretry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/pgretry"
)

// A statement aborted to break a deadlock runs again, up to Attempts times; any other
// error is returned at once.
func TestOnDeadlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	deadlock := &pgconn.PgError{Code: "40P01"}
	calls := 0
	require.NoError(t, pgretry.OnDeadlock(ctx, func() error {
		calls++
		if calls == 1 {
			return fmt.Errorf("drop index: %w", deadlock)
		}
		return nil
	}))
	require.Equal(t, 2, calls)

	calls = 0
	other := errors.New("disk full")
	require.ErrorIs(t, pgretry.OnDeadlock(ctx, func() error { calls++; return other }), other)
	require.Equal(t, 1, calls)

	calls = 0
	require.ErrorIs(t, pgretry.OnDeadlock(ctx, func() error { calls++; return deadlock }), deadlock)
	require.Equal(t, pgretry.Attempts, calls)
	require.False(t, pgretry.IsDeadlock(&pgconn.PgError{Code: "40001"}), "a serialization failure is not a deadlock")
}
