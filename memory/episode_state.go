package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EpisodeState is where an episode's extraction stands.
type EpisodeState string

// States of an episode's extraction.
const (
	EpisodePending EpisodeState = "pending"
	EpisodeApplied EpisodeState = "applied"
	EpisodeFailed  EpisodeState = "failed"
)

// Valid says whether st is one of the states (the empty state is not).
func (st EpisodeState) Valid() bool {
	switch st {
	case EpisodePending, EpisodeApplied, EpisodeFailed:
		return true
	}
	return false
}

// NewEpisode is a transcript to store as an episode.
type NewEpisode struct {
	Scope string
	// ExternalID is the caller's id of the transcript; "" is none.
	ExternalID string
	// Messages is the transcript as JSON.
	Messages    json.RawMessage
	ContentHash string
	OccurredAt  time.Time
	// TraceParent is the W3C traceparent of the enqueue's span, which the episode's
	// extraction continues; "" when tracing is off.
	TraceParent string
	// Redactions counts, by kind, the secrets redaction replaced in Messages; nil when
	// none.
	Redactions map[string]int
}

// StoredEpisode is what InsertEpisodesTx did with one NewEpisode.
type StoredEpisode struct {
	ID int64
	// Inserted is false for a duplicate: a transcript already stored in its scope (same
	// content hash), whose episode ID is.
	Inserted bool
}

// episodeInsertChunk bounds the inserts of one round trip.
const episodeInsertChunk = 500

// InsertEpisodesTx stores eps as pending episodes in tx, in order, and returns one
// StoredEpisode each. The caller holds the scopes' queue locks and inserts their jobs in
// the same transaction (extract.Enqueue).
func InsertEpisodesTx(ctx context.Context, tx pgx.Tx, eps []NewEpisode) ([]StoredEpisode, error) {
	out := make([]StoredEpisode, len(eps))
	for start := 0; start < len(eps); start += episodeInsertChunk {
		end := min(start+episodeInsertChunk, len(eps))
		batch := &pgx.Batch{}
		for _, e := range eps[start:end] {
			// The no-op update makes RETURNING give the existing id of a duplicate;
			// xmax = 0 tells a fresh insert from it.
			var redactions map[string]int
			if len(e.Redactions) > 0 {
				redactions = e.Redactions
			}
			batch.Queue(`INSERT INTO episode (scope, external_id, messages, content_hash, occurred_at, trace_parent, redactions)
				VALUES ($1, nullif($2, ''), $3, $4, $5, nullif($6, ''), $7)
				ON CONFLICT (scope, content_hash) DO UPDATE SET scope = excluded.scope
				RETURNING id, xmax = 0`, e.Scope, e.ExternalID, e.Messages, e.ContentHash, e.OccurredAt, e.TraceParent, redactions)
		}
		br := tx.SendBatch(ctx, batch)
		for i := start; i < end; i++ {
			if err := br.QueryRow().Scan(&out[i].ID, &out[i].Inserted); err != nil {
				br.Close()
				return nil, fmt.Errorf("insert episode of record %d: %w", i+1, err)
			}
		}
		if err := br.Close(); err != nil {
			return nil, fmt.Errorf("insert episodes: %w", err)
		}
	}
	return out, nil
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

// onCitus reports whether the database is a Citus coordinator, where a recursive query
// runs on one shard only and the queries that span scopes take their sharded form.
func onCitus(ctx context.Context, db querier) (bool, error) {
	var citus bool
	err := db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')").Scan(&citus)
	return citus, err
}

// scopesTx lists, in tx, the scopes that query reads, or on Citus sharded, its form
// without a recursive scan; what names the list in errors.
func scopesTx(ctx context.Context, tx pgx.Tx, what, query, sharded string) ([]string, error) {
	citus, err := onCitus(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", what, err)
	}
	if citus {
		query = sharded
	}
	rows, err := tx.Query(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", what, err)
	}
	scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", what, err)
	}
	return scopes, nil
}

// PendingScopesTx is, in tx, every scope with a pending episode, in order.
func PendingScopesTx(ctx context.Context, tx pgx.Tx) ([]string, error) {
	return scopesTx(ctx, tx, "scopes with pending episodes", pendingScopesSQL, shardedPendingScopesSQL)
}

// HasPendingEpisodesTx says, in tx, whether scope has a pending episode. Run after the
// scope's queue lock, in a statement of its own, it sees every episode whose enqueue
// committed before.
func HasPendingEpisodesTx(ctx context.Context, tx pgx.Tx, scope string) (bool, error) {
	var more bool
	err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM episode WHERE scope = $1 AND state = 'pending')",
		scope).Scan(&more)
	if err != nil {
		return false, fmt.Errorf("pending episodes of %q: %w", scope, err)
	}
	return more, nil
}

// PendingEpisodeScopeTx is, in tx, the scope of episode id if it is pending; ok is false
// when it is gone or no longer pending.
func PendingEpisodeScopeTx(ctx context.Context, tx pgx.Tx, id int64) (scope string, ok bool, err error) {
	err = tx.QueryRow(ctx, "SELECT scope FROM episode WHERE id = $1 AND state = 'pending'", id).Scan(&scope)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read episode %d: %w", id, err)
	}
	return scope, true, nil
}

// RetryEpisodeTx makes failed episode id of scope pending again in tx, with no attempts
// and no error, and says whether it did: false when it is not a failed episode of scope.
func RetryEpisodeTx(ctx context.Context, tx pgx.Tx, scope string, id int64) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE episode SET state = 'pending', attempts = 0, last_error = NULL, processed_at = NULL
		WHERE id = $1 AND scope = $2 AND state = 'failed'`, id, scope)
	if err != nil {
		return false, fmt.Errorf("retry episode %d: %w", id, err)
	}
	return tag.RowsAffected() > 0, nil
}

// PendingEpisode is what an extraction reads of the episode it works on.
type PendingEpisode struct {
	ID    int64
	Scope string
	// Messages is the transcript as stored, JSON: the extraction decodes it, and fails
	// the episode when it cannot.
	Messages   json.RawMessage
	OccurredAt time.Time
	// Attempts is how many times the episode was tried before.
	Attempts int
	// Progress is where the next segment of a transcript extracted in segments starts;
	// zero when none was applied.
	Progress Progress
	// TraceParent is NewEpisode.TraceParent.
	TraceParent string
	// Redactions counts what redaction replaced in the transcript; nil when nothing.
	Redactions map[string]int
}

// Progress is a point in a transcript: the message at index Message, from byte Offset
// of its content.
type Progress struct {
	Message, Offset int
}

// NextPendingEpisode is the scope's oldest pending episode (by occurred_at, then id), or
// nil when there is none: the queue's normal end, not an error.
func (s *Store) NextPendingEpisode(ctx context.Context, scope string) (*PendingEpisode, error) {
	var ep *PendingEpisode
	if err := sendQueued(ctx, s.db, func(b *pgx.Batch) { queueNextPendingEpisode(b, scope, &ep) }); err != nil {
		return nil, err
	}
	return ep, nil
}

// queueNextPendingEpisode queues NextPendingEpisode's read on b, into *dst once b is
// sent (nil when none is pending).
func queueNextPendingEpisode(b *pgx.Batch, scope string, dst **PendingEpisode) {
	b.Queue(`SELECT id, messages, occurred_at, attempts, progress_message, progress_offset,
			coalesce(trace_parent, ''), redactions FROM episode
		WHERE scope = $1 AND state = 'pending' ORDER BY occurred_at, id LIMIT 1`, scope).QueryRow(func(row pgx.Row) error {
		ep := &PendingEpisode{Scope: scope}
		err := row.Scan(&ep.ID, &ep.Messages, &ep.OccurredAt, &ep.Attempts, &ep.Progress.Message, &ep.Progress.Offset,
			&ep.TraceParent, &ep.Redactions)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("next pending episode of %q: %w", scope, err)
		}
		ep.OccurredAt = ep.OccurredAt.UTC()
		*dst = ep
		return nil
	})
}

// ApplyEpisode marks the pending episode of b (b.EpisodeID, b.Scope) applied at its
// attempt-th attempt and applies b, in one transaction. It returns nil, and stores
// nothing, when the episode is no longer pending: applied by another job, or purged.
func (s *Store) ApplyEpisode(ctx context.Context, b *Batch, attempt int) (*Result, error) {
	return s.applyEpisode(ctx, b, attempt, nil)
}

// Segment is the span of a transcript one ApplySegment applies: from where the episode
// stands to Next, where the next segment starts; the Last segment ends the transcript.
type Segment struct {
	From, Next Progress
	Last       bool
}

// ApplySegment applies b, what one segment of a transcript extracted in segments said,
// and records where the next segment starts (the last one marks the episode applied), in
// one transaction. Like ApplyEpisode, it returns nil and stores nothing when the episode
// is no longer pending, and it applies nothing twice: a segment that does not start
// where the episode stands (another job applied it) stores nothing either.
func (s *Store) ApplySegment(ctx context.Context, b *Batch, attempt int, seg Segment) (*Result, error) {
	return s.applyEpisode(ctx, b, attempt, &seg)
}

func (s *Store) applyEpisode(ctx context.Context, b *Batch, attempt int, seg *Segment) (*Result, error) {
	if b.EpisodeID == nil {
		return nil, fmt.Errorf("%w: apply an episode: the batch names no episode", ErrInvalid)
	}
	id := *b.EpisodeID
	var res *Result
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Marking the episode first locks its row: should a second job ever work the
		// same episode (a rescued job whose first run is still finishing), it waits
		// here, then finds it applied (or further on) and applies nothing; an episode
		// purged meanwhile is not found, and nothing is stored. The scope's lock is taken
		// before, in the same round trip, as a purge takes it before deleting the episode.
		batch := &pgx.Batch{}
		queueLockScope(batch, b.Scope)
		switch {
		case seg == nil:
			batch.Queue(`UPDATE episode SET state = 'applied', processed_at = now(), attempts = $2,
				last_error = NULL WHERE scope = $3 AND id = $1 AND state = 'pending'`, id, attempt, b.Scope)
		case seg.Last:
			batch.Queue(`UPDATE episode SET state = 'applied', processed_at = now(), attempts = $2, last_error = NULL
				WHERE scope = $3 AND id = $1 AND state = 'pending' AND progress_message = $4 AND progress_offset = $5`,
				id, attempt, b.Scope, seg.From.Message, seg.From.Offset)
		default:
			batch.Queue(`UPDATE episode SET progress_message = $4, progress_offset = $5, attempts = $2, last_error = NULL
				WHERE scope = $3 AND id = $1 AND state = 'pending' AND progress_message = $6 AND progress_offset = $7`,
				id, attempt, b.Scope, seg.Next.Message, seg.Next.Offset, seg.From.Message, seg.From.Offset)
		}
		br := tx.SendBatch(ctx, batch)
		_, err := br.Exec()
		var tag pgconn.CommandTag
		if err == nil {
			tag, err = br.Exec()
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("mark episode %d applied: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		res, err = s.ApplyTx(ctx, tx, b)
		return err
	})
	return res, err
}

// EpisodeFailure is an attempt at an episode that failed.
type EpisodeFailure struct {
	ID    int64
	Scope string
	// Attempt is the attempt that failed, counted from 1.
	Attempt int
	// Err is why, kept as the episode's last_error.
	Err error
	// Final fails the episode; otherwise it stays pending for another attempt.
	Final bool
}

// RecordEpisodeFailure records f on its episode, if still pending.
func (s *Store) RecordEpisodeFailure(ctx context.Context, f EpisodeFailure) error {
	state := EpisodePending
	if f.Final {
		state = EpisodeFailed
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE episode SET attempts = $2, last_error = $3, state = $4
			WHERE scope = $5 AND id = $1 AND state = 'pending'`, f.ID, f.Attempt, f.Err.Error(), state, f.Scope)
		if err != nil || !f.Final || tag.RowsAffected() == 0 {
			return err
		}
		return s.announceTx(ctx, tx, []Change{{Scope: f.Scope, Kind: ChangeEpisodeFailed, ID: f.ID, At: s.clock()}})
	})
	if err != nil {
		return fmt.Errorf("record failure of episode %d: %w", f.ID, err)
	}
	return nil
}

// EpisodeStates is where every episode of every scope stands, without transcripts: an
// evaluation's whole database, never a tenant's service.
func (s *Store) EpisodeStates(ctx context.Context) ([]Episode, error) {
	rows, err := s.db.Query(ctx, "SELECT id, scope, state, attempts, last_error FROM episode")
	if err != nil {
		return nil, fmt.Errorf("read episodes: %w", err)
	}
	eps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Episode, error) {
		var e Episode
		err := row.Scan(&e.ID, &e.Scope, &e.State, &e.Attempts, &e.LastError)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read episodes: %w", err)
	}
	return eps, nil
}
