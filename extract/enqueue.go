package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// Enqueue stores validated transcripts as episodes and makes sure each scope with a new
// episode has an extraction job, all in tx: either every record is enqueued or none. A
// transcript already stored in its scope (same content hash) is counted as a
// duplicate, not enqueued again. A record without occurred_at happened at now.
//
// Enqueue holds the scopes' queue locks until tx ends. A scope's job takes the same
// lock when it finds nothing left and completes, so either that job sees the new
// episode, or it has completed before the new job is inserted: no episode is ever left
// without a job, and no scope has two.
func Enqueue(ctx context.Context, tx pgx.Tx, jobs Inserter, ts []transcript.Transcript, now time.Time) (*EnqueueResult, error) {
	res := &EnqueueResult{EpisodeIDs: make([]int64, len(ts))}
	scopes := make([]string, len(ts))
	for i, t := range ts {
		scopes[i] = t.Scope
	}
	if err := lockQueues(ctx, tx, scopes); err != nil {
		return nil, err
	}
	var fresh []string
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
			fresh = append(fresh, ts[i].Scope)
		}
		if err := br.Close(); err != nil {
			return nil, fmt.Errorf("insert episodes: %w", err)
		}
	}
	if _, err := insertScopeJobs(ctx, tx, jobs, fresh); err != nil {
		return nil, err
	}
	return res, nil
}

// lockQueues takes, until tx ends, the queue lock of each scope: the lock that orders
// enqueuing against a scope job's last look for pending episodes. Locks are taken in
// key order, so two transactions locking several scopes cannot deadlock.
func lockQueues(ctx context.Context, tx pgx.Tx, scopes []string) error {
	if len(scopes) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `SELECT count(pg_advisory_xact_lock(hashtext('credo:extract'), k))
		FROM (SELECT DISTINCT hashtext(s) AS k FROM unnest($1::text[]) AS s ORDER BY k) AS keys`, scopes)
	if err != nil {
		return fmt.Errorf("lock scope queues: %w", err)
	}
	return nil
}

// insertScopeJobs inserts one extraction job per distinct scope and returns how many it
// inserted: a scope whose job is not finished gets no second one.
func insertScopeJobs(ctx context.Context, tx pgx.Tx, jobs Inserter, scopes []string) (int, error) {
	scopes = slices.Clone(scopes)
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	n := 0
	const chunk = 1000
	for start := 0; start < len(scopes); start += chunk {
		var params []river.InsertManyParams
		for _, s := range scopes[start:min(start+chunk, len(scopes))] {
			params = append(params, river.InsertManyParams{Args: Args{Scope: s}})
		}
		res, err := jobs.InsertManyTx(ctx, tx, params)
		if err != nil {
			return n, fmt.Errorf("insert extraction jobs: %w", err)
		}
		for _, r := range res {
			if !r.UniqueSkippedAsDuplicate {
				n++
			}
		}
	}
	return n, nil
}

// pendingScopesSQL is the scopes with pending episodes: a skip scan over the pending
// index, one probe per scope, however long its backlog.
const pendingScopesSQL = `
	WITH RECURSIVE scopes AS (
		(SELECT scope FROM episode WHERE state = 'pending' ORDER BY scope LIMIT 1)
		UNION ALL
		SELECT (SELECT e.scope FROM episode e WHERE e.state = 'pending' AND e.scope > s.scope ORDER BY e.scope LIMIT 1)
		FROM scopes s WHERE s.scope IS NOT NULL
	)
	SELECT scope FROM scopes WHERE scope IS NOT NULL`

// shardedPendingScopesSQL is pendingScopesSQL on Citus, which runs no recursive query
// across shards: each shard lists its scopes from its own pending index, reading each
// pending episode once (the reconcile spans scopes; docs/operations.md lists it).
const shardedPendingScopesSQL = `SELECT DISTINCT scope FROM episode WHERE state = 'pending' ORDER BY scope`

// Reconcile inserts, in tx, a job for every scope that has pending episodes and none
// (an upgrade from per-episode jobs, a job discarded after a database outage outlasted
// its attempts), and returns how many it inserted. Scopes that have a job are skipped
// by River's uniqueness, so it is safe at any time.
func Reconcile(ctx context.Context, tx pgx.Tx, jobs Inserter) (int, error) {
	var citus bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')").Scan(&citus); err != nil {
		return 0, fmt.Errorf("find scopes with pending episodes: %w", err)
	}
	query := pendingScopesSQL
	if citus {
		query = shardedPendingScopesSQL
	}
	rows, err := tx.Query(ctx, query)
	if err != nil {
		return 0, fmt.Errorf("find scopes with pending episodes: %w", err)
	}
	scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("find scopes with pending episodes: %w", err)
	}
	return insertScopeJobs(ctx, tx, jobs, scopes)
}
