package riverjobs

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Inserter inserts River jobs in a transaction; *river.Client[pgx.Tx] is one.
type Inserter interface {
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// insertChunk bounds the jobs of one InsertManyTx, and so the size of its statement.
const insertChunk = 1000

// InsertMany inserts the job args(item) for each of items in tx and returns how many
// it inserted: a job that River's uniqueness skips as a duplicate is not counted.
func InsertMany[T any, A river.JobArgs](ctx context.Context, tx pgx.Tx, jobs Inserter, items []T, args func(T) A) (int, error) {
	n := 0
	for chunk := range slices.Chunk(items, insertChunk) {
		params := make([]river.InsertManyParams, len(chunk))
		for i, item := range chunk {
			params[i] = river.InsertManyParams{Args: args(item)}
		}
		res, err := jobs.InsertManyTx(ctx, tx, params)
		if err != nil {
			return n, err
		}
		for _, r := range res {
			if !r.UniqueSkippedAsDuplicate {
				n++
			}
		}
	}
	return n, nil
}

// UniqueWhileUnfinished allows one job per args among those in UnfinishedStates. River
// requires available, pending, running and scheduled in ByState; retryable is there
// because a job waiting for its retry still has its work to do. Completed is left out,
// so a finished job never blocks the next one.
func UniqueWhileUnfinished() river.UniqueOpts {
	return river.UniqueOpts{ByArgs: true, ByState: slices.Clone(UnfinishedStates)}
}
