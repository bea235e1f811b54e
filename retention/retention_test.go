package retention_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/testclock"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/retention"
)

const (
	nyc   = "User lives in New York City"
	miami = "User lives in Miami"
	// retain is the period of the tests: 90 days.
	retain = 90 * 24 * time.Hour
)

type testBundle struct {
	schema  *dbtest.Schema
	store   *memory.Store
	clock   *testclock.Clock
	reports *reports
	// log is what the worker logged, as text.
	log *syncBuffer
}

// syncBuffer is a bytes.Buffer the worker's goroutines may log to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	schema := dbtest.New(t)
	c := testclock.New(time.Time{})
	return &testBundle{schema: schema, store: memory.NewStore(schema.Pool, &memory.Config{Now: c.Now}), clock: c,
		reports: &reports{}, log: &syncBuffer{}}
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// seedMove stores NYC, superseded by Miami on 2025-03-10: history due after 90 days.
func (b *testBundle) seedMove(t *testing.T, scope string) (nycID, miamiID int64) {
	t.Helper()
	ctx := context.Background()
	fact := func(statement string) memory.Fact {
		return memory.Fact{Statement: statement, Subject: "user", Attribute: "location", Kind: memory.KindAttribute,
			Confidence: 0.9, Origin: memory.OriginUserStated}
	}
	b.clock.Set(day("2025-01-10"))
	res, err := b.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: day("2025-01-10"),
		Facts: []memory.Fact{fact(nyc)}})
	require.NoError(t, err)
	nycID = res.Facts[0].BeliefID
	b.clock.Set(day("2025-03-10"))
	f := fact(miami)
	f.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = b.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: day("2025-03-10"),
		Candidates: []int64{nycID}, Facts: []memory.Fact{f}})
	require.NoError(t, err)
	return nycID, res.Facts[0].BeliefID
}

// start runs a River client with the curation worker and its periodic job, and returns
// the channel of its finished jobs.
func (b *testBundle) start(t *testing.T, retain time.Duration) <-chan *river.Event {
	t.Helper()
	ctx := context.Background()
	workers := river.NewWorkers()
	require.NoError(t, river.AddWorkerSafely(workers, retention.NewWorker(retention.Config{Store: b.store, Retain: retain,
		Logger: slog.New(slog.NewTextHandler(b.log, &slog.HandlerOptions{Level: slog.LevelDebug})), Observer: b.reports})))
	client, err := river.NewClient(riverpgxv5.New(b.schema.Pool), &river.Config{
		Queues:            map[string]river.QueueConfig{retention.Queue: {MaxWorkers: 1}},
		Workers:           workers,
		PeriodicJobs:      []*river.PeriodicJob{retention.PeriodicJob(time.Hour)},
		FetchPollInterval: 100 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
		TestOnly:          true,
	})
	require.NoError(t, err)
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	t.Cleanup(cancel)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(stopCtx))
	})
	return events
}

// reports records what the worker tells its observer (the metrics, in the worker).
type reports struct {
	mu   sync.Mutex
	list []retention.Report
}

func (r *reports) Curated(rep retention.Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rep)
}

func (r *reports) all() []retention.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]retention.Report(nil), r.list...)
}

func waitJob(t *testing.T, events <-chan *river.Event) {
	t.Helper()
	select {
	case ev := <-events:
		require.Equal(t, river.EventKindJobCompleted, ev.Kind, "job %s: %v", ev.Job.Kind, ev.Job.Errors)
		require.Equal(t, retention.Args{}.Kind(), ev.Job.Kind)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the curation job did not complete")
	}
}

func TestPeriodicJobThroughRiver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	nycID, miamiID := b.seedMove(t, "user:ana")
	b.seedMove(t, "user:bob")
	b.clock.Set(day("2026-06-01"))

	// RunOnStart: the leader enqueues a curation at once, which removes NYC twice.
	waitJob(t, b.start(t, retain))
	_, err := b.store.Get(ctx, nycID)
	require.ErrorIs(t, err, memory.ErrNotFound)
	current, err := b.store.Get(ctx, miamiID)
	require.NoError(t, err)
	require.Equal(t, memory.StatusActive, current.Status)
	var tombstones int
	require.NoError(t, b.schema.Pool.QueryRow(ctx, "SELECT count(*) FROM purge_tombstone WHERE what = 'history'").Scan(&tombstones))
	require.Equal(t, 2, tombstones)

	reps := b.reports.all()
	require.Len(t, reps, 1, "one curation observed")
	require.NoError(t, reps[0].Err)
	require.Equal(t, 2, reps[0].Beliefs)
	require.Zero(t, reps[0].Episodes)

	log := b.log.String()
	require.Contains(t, log, "history curated")
	require.Contains(t, log, "scopes=2 beliefs=2 episodes=0 revision_events=2")
	for _, secret := range []string{nyc, miami, "user:ana", "user:bob"} {
		require.NotContains(t, log, secret, "the log holds counts only")
	}
}

// A job left by a process with RETAIN_HISTORY is worked by one without it: it
// completes and removes nothing.
func TestWorkerWithoutPeriodKeepsHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	nycID, _ := b.seedMove(t, "user:ana")
	b.clock.Set(day("2026-06-01"))

	waitJob(t, b.start(t, 0))
	old, err := b.store.Get(ctx, nycID)
	require.NoError(t, err)
	require.Equal(t, memory.StatusSuperseded, old.Status)
	require.Empty(t, b.reports.all(), "nothing curated, nothing observed")
	require.Contains(t, b.log.String(), "RETAIN_HISTORY is not set")
}
