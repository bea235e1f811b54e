package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transcript"
)

// EnqueueResult says what Enqueue did with each record.
type EnqueueResult struct {
	Enqueued   int
	Duplicates int
	// EpisodeIDs has one id per record, in input order; a duplicate gets the id of the
	// episode it repeats.
	EpisodeIDs []int64
	// Redacted counts, by kind, the secrets replaced in the records enqueued (not in
	// duplicates, whose episodes were redacted when first stored).
	Redacted redact.Counts
}

// Inserter inserts River jobs in a transaction; *river.Client[pgx.Tx] is one.
type Inserter = riverjobs.Inserter

// Enqueue stores validated transcripts as episodes and makes sure each scope with a new
// episode has an extraction job, all in tx: either every record is enqueued or none.
// Each transcript is redacted first (RedactTx, with red as the deployment's redactor;
// nil is redact.Default): what is stored, hashed and later shown to the model is the
// redacted transcript, and its episode keeps the counts. A transcript already stored in
// its scope (same content hash, of the redacted text) is counted as a duplicate, not
// enqueued again. A record without occurred_at happened at now.
//
// Enqueue holds the scopes' queue locks until tx ends. A scope's job takes the same
// lock when it finds nothing left and completes, so either that job sees the new
// episode, or it has completed before the new job is inserted: no episode is ever left
// without a job, and no scope has two.
func Enqueue(ctx context.Context, tx pgx.Tx, jobs Inserter, ts []transcript.Transcript, now time.Time, red *redact.Redactor) (_ *EnqueueResult, err error) {
	// Each episode carries this span, which its extraction continues.
	ctx, span := tracing.Start(ctx, "extract.enqueue", tracing.CountKey.Int(len(ts)))
	defer func() { tracing.End(span, err) }()
	carried := tracing.Carry(ctx)
	res := &EnqueueResult{EpisodeIDs: make([]int64, len(ts)), Redacted: redact.Counts{}}
	scopes := make([]string, len(ts))
	for i, t := range ts {
		scopes[i] = t.Scope
	}
	if err := lockQueues(ctx, tx, scopes); err != nil {
		return nil, err
	}
	ts, redacted, err := RedactTx(ctx, tx, red, ts)
	if err != nil {
		return nil, err
	}
	eps := make([]memory.NewEpisode, len(ts))
	for i, t := range ts {
		messages, err := json.Marshal(t.Messages)
		if err != nil {
			return nil, fmt.Errorf("encode messages: %w", err)
		}
		at := now
		if t.OccurredAt != nil {
			at = *t.OccurredAt
		}
		eps[i] = memory.NewEpisode{Scope: t.Scope, ExternalID: t.ID, Messages: messages, ContentHash: t.ContentHash(), OccurredAt: at,
			TraceParent: carried, Redactions: redacted[i]}
	}
	stored, err := memory.InsertEpisodesTx(ctx, tx, eps)
	if err != nil {
		return nil, err
	}
	var fresh []string
	for i, st := range stored {
		res.EpisodeIDs[i] = st.ID
		if !st.Inserted {
			res.Duplicates++
			continue
		}
		res.Enqueued++
		res.Redacted.Add(redacted[i])
		fresh = append(fresh, ts[i].Scope)
	}
	if _, err := insertScopeJobs(ctx, tx, jobs, fresh); err != nil {
		return nil, err
	}
	return res, nil
}

// ScheduleTx makes sure each of scopes has its extraction job, in tx, and holds the
// scopes' queue locks until tx ends, as Enqueue does: for a writer that stores pending
// episodes some other way (an import), in tx after this call. It returns how many jobs
// it inserted.
func ScheduleTx(ctx context.Context, tx pgx.Tx, jobs Inserter, scopes []string) (int, error) {
	if err := lockQueues(ctx, tx, scopes); err != nil {
		return 0, err
	}
	return insertScopeJobs(ctx, tx, jobs, scopes)
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
	n, err := riverjobs.InsertMany(ctx, tx, jobs, scopes, func(s string) Args { return Args{Scope: s} })
	if err != nil {
		return n, fmt.Errorf("insert extraction jobs: %w", err)
	}
	return n, nil
}

// Reconcile inserts, in tx, a job for every scope that has pending episodes and none
// (an upgrade from per-episode jobs, a job discarded after a database outage outlasted
// its attempts), and returns how many it inserted. Scopes that have a job are skipped
// by River's uniqueness, so it is safe at any time.
func Reconcile(ctx context.Context, tx pgx.Tx, jobs Inserter) (int, error) {
	scopes, err := memory.PendingScopesTx(ctx, tx)
	if err != nil {
		return 0, err
	}
	return insertScopeJobs(ctx, tx, jobs, scopes)
}
