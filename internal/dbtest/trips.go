package dbtest

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TripTx counts the round trips made through a transaction: one per statement sent
// alone, one per batch, for the tests that bound a write's trips.
type TripTx struct {
	pgx.Tx
	Trips int
}

// Exec counts a trip and runs the statement.
func (t *TripTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	t.Trips++
	return t.Tx.Exec(ctx, sql, args...)
}

// Query counts a trip and runs the query.
func (t *TripTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	t.Trips++
	return t.Tx.Query(ctx, sql, args...)
}

// QueryRow counts a trip and runs the query.
func (t *TripTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	t.Trips++
	return t.Tx.QueryRow(ctx, sql, args...)
}

// SendBatch counts a trip and sends the batch.
func (t *TripTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	t.Trips++
	return t.Tx.SendBatch(ctx, b)
}
