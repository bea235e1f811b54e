package memory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// InTx runs fn in a transaction on the store's pool, committed when fn returns nil, for
// a caller whose transaction spans memory's statements (the methods and functions named
// …Tx) and River's (JobCompleteTx, InsertTx): a River worker's, an enqueue's. fn runs
// no SQL of its own on memory's tables: memory owns them.
func (s *Store) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// WithConn runs fn with a store whose reads take one connection of the pool, released
// when fn returns: for a caller making several reads in a row, never across a model
// call.
func (s *Store) WithConn(ctx context.Context, fn func(s *Store) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	return fn(s.On(conn))
}
