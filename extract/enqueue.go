package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/credohq/credo/transcript"
)

// EnqueueResult says what Enqueue did with each record.
type EnqueueResult struct {
	Enqueued   int
	Duplicates int
	// EpisodeIDs has one id per record, in input order; a duplicate gets the id of the
	// episode it repeats.
	EpisodeIDs []int64
}

// Inserter inserts River jobs in a transaction; *river.Client[pgx.Tx] is one.
type Inserter interface {
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Enqueue stores validated transcripts as episodes and inserts one extraction job per
// new episode, all in tx: either every record is enqueued or none. A transcript already
// stored in its scope (same content hash) is counted as a duplicate, not enqueued again.
// A record without occurred_at happened at now.
func Enqueue(ctx context.Context, tx pgx.Tx, jobs Inserter, ts []transcript.Transcript, now time.Time) (*EnqueueResult, error) {
	res := &EnqueueResult{EpisodeIDs: make([]int64, len(ts))}
	var params []river.InsertManyParams
	const chunk = 500
	for start := 0; start < len(ts); start += chunk {
		end := min(start+chunk, len(ts))
		batch := &pgx.Batch{}
		for _, t := range ts[start:end] {
			messages, err := json.Marshal(t.Messages)
			if err != nil {
				return nil, fmt.Errorf("encode messages: %w", err)
			}
			at := now
			if t.OccurredAt != nil {
				at = *t.OccurredAt
			}
			// The no-op update makes RETURNING give the existing id of a duplicate;
			// xmax = 0 tells a fresh insert from it.
			batch.Queue(`INSERT INTO episode (scope, external_id, messages, content_hash, occurred_at)
				VALUES ($1, nullif($2, ''), $3, $4, $5)
				ON CONFLICT (scope, content_hash) DO UPDATE SET scope = excluded.scope
				RETURNING id, xmax = 0`, t.Scope, t.ID, messages, t.ContentHash(), at)
		}
		br := tx.SendBatch(ctx, batch)
		for i := start; i < end; i++ {
			var inserted bool
			if err := br.QueryRow().Scan(&res.EpisodeIDs[i], &inserted); err != nil {
				br.Close()
				return nil, fmt.Errorf("insert episode of record %d: %w", i+1, err)
			}
			if !inserted {
				res.Duplicates++
				continue
			}
			res.Enqueued++
			params = append(params, river.InsertManyParams{Args: Args{EpisodeID: res.EpisodeIDs[i]}})
		}
		if err := br.Close(); err != nil {
			return nil, fmt.Errorf("insert episodes: %w", err)
		}
	}
	if len(params) > 0 {
		if _, err := jobs.InsertManyTx(ctx, tx, params); err != nil {
			return nil, fmt.Errorf("insert extraction jobs: %w", err)
		}
	}
	return res, nil
}
