package consolidate

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

// insertClient is an insert-only River client on the bundle's schema.
func (b *testBundle) insertClient(t *testing.T) *river.Client[pgx.Tx] {
	t.Helper()
	client, err := river.NewClient(riverpgxv5.New(b.schema.Pool), &river.Config{
		Logger: slog.New(slog.DiscardHandler), SkipUnknownJobCheck: true, TestOnly: true,
	})
	require.NoError(t, err)
	return client
}

// sweep runs Sweep in its own transaction.
func (b *testBundle) sweep(t *testing.T, jobs Inserter) int {
	t.Helper()
	var n int
	err := pgx.BeginFunc(context.Background(), b.schema.Pool, func(tx pgx.Tx) error {
		var err error
		n, err = Sweep(context.Background(), tx, jobs)
		return err
	})
	require.NoError(t, err)
	return n
}

func (b *testBundle) enqueue(t *testing.T, jobs Inserter, scopes ...string) int {
	t.Helper()
	var n int
	err := pgx.BeginFunc(context.Background(), b.schema.Pool, func(tx pgx.Tx) error {
		var err error
		n, err = Enqueue(context.Background(), tx, jobs, scopes...)
		return err
	})
	require.NoError(t, err)
	return n
}

// jobScopes is the scopes of the consolidation jobs in the given states, sorted.
func (b *testBundle) jobScopes(t *testing.T, states ...string) []string {
	t.Helper()
	rows, err := b.schema.Pool.Query(context.Background(), `SELECT args FROM river_job WHERE kind = $1 AND state = ANY($2)`,
		Args{}.Kind(), states)
	require.NoError(t, err)
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	require.NoError(t, err)
	var scopes []string
	for _, raw := range raws {
		var a Args
		require.NoError(t, json.Unmarshal(raw, &a))
		scopes = append(scopes, a.Scope)
	}
	slices.Sort(scopes)
	return scopes
}

func TestSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)
	jobs := bundle.insertClient(t)

	for _, scope := range []string{"user:a", "user:b", "user:c"} {
		bundle.add(t, scope, memory.RevisionExtraction, fact(miami, "location", "2026-01-10"))
	}
	// b and c are consolidated; then c changes again.
	for _, scope := range []string{"user:b", "user:c"} {
		_, err := w.RunScope(ctx, scope)
		require.NoError(t, err)
	}
	bundle.clock.Advance(time.Minute)
	bundle.add(t, "user:c", memory.RevisionExtraction, fact(chrome, "browser_work", "2026-01-10"))

	require.Equal(t, 2, bundle.sweep(t, jobs))
	require.Equal(t, []string{"user:a", "user:c"}, bundle.jobScopes(t, "available"))

	// While those wait, neither a sweep nor an explicit enqueue adds a second job.
	require.Zero(t, bundle.sweep(t, jobs))
	require.Zero(t, bundle.enqueue(t, jobs, "user:a", "user:c"))
	require.Equal(t, 1, bundle.enqueue(t, jobs, "user:b"))
	require.Equal(t, []string{"user:a", "user:b", "user:c"}, bundle.jobScopes(t, "available"))

	// A pass's own supersessions do not bring its scope back.
	_, err := bundle.schema.Pool.Exec(ctx, "DELETE FROM river_job")
	require.NoError(t, err)
	bundle.add(t, "user:b", memory.RevisionExtraction, fact(florida, "location", "2026-02-01"))
	bundle.llm.Handle(judge(miami, florida, "duplicate"))
	for _, scope := range []string{"user:a", "user:b", "user:c"} {
		_, err := w.RunScope(ctx, scope)
		require.NoError(t, err)
	}
	events, err := bundle.store.Events(ctx, "user:b", 0)
	require.NoError(t, err)
	require.Len(t, events, 1)
	require.Zero(t, bundle.sweep(t, jobs))
	require.Empty(t, bundle.jobScopes(t, "available"))
}

// The watermark stays behind the database's clock by the settle margin, so a belief
// committed late with an older timestamp is still found; the pass after the margin
// catches up at no LLM cost.
func TestWatermarkSettles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)
	jobs := bundle.insertClient(t)
	bundle.llm.Handle(judge(miami, florida, "duplicate"))

	bundle.clock.Advance(2*time.Hour - 10*time.Second) // now-ish: within the margin
	bundle.add(t, "user:1", memory.RevisionExtraction, fact(chrome, "browser_work", "2026-01-10"), fact(firefox, "browser_home", "2026-02-01"))
	rep, err := w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.ChatCalls)
	require.NotNil(t, rep.Watermark)
	require.Less(t, *rep.Watermark, bundle.clock.Now())
	require.False(t, rep.More)
	require.Equal(t, 1, bundle.sweep(t, jobs), "the recent changes are looked at again")

	w2, err := NewWorker(Config{Store: bundle.store, Chat: w.cfg.Chat, EmbedModel: llmtest.DefaultEmbedModel, Settle: -1})
	require.NoError(t, err)
	rep, err = w2.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.Judged)
	require.Zero(t, rep.ChatCalls)
	require.Equal(t, bundle.clock.Now(), *rep.Watermark)
	_, err = bundle.schema.Pool.Exec(ctx, "DELETE FROM river_job")
	require.NoError(t, err)
	require.Zero(t, bundle.sweep(t, jobs))
}

func TestPeriodicJobThroughRiver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)
	bundle.llm.Handle(judge(miami, florida, "duplicate"))

	ids := bundle.add(t, "user:1", memory.RevisionExtraction, fact(miami, "location", "2026-01-10"), fact(florida, "location", "2026-02-01"))
	bundle.add(t, "user:2", memory.RevisionExtraction, fact(chrome, "browser_work", "2026-01-10"))

	workers := river.NewWorkers()
	require.NoError(t, river.AddWorkerSafely(workers, w))
	require.NoError(t, river.AddWorkerSafely(workers, NewSweepWorker(bundle.schema.Pool, nil)))
	client, err := river.NewClient(riverpgxv5.New(bundle.schema.Pool), &river.Config{
		Queues:            map[string]river.QueueConfig{Queue: {MaxWorkers: 2}},
		Workers:           workers,
		PeriodicJobs:      []*river.PeriodicJob{PeriodicJob(time.Hour)},
		FetchPollInterval: 100 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
		TestOnly:          true,
	})
	require.NoError(t, err)
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer cancel()
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(stopCtx))
	})

	// RunOnStart: the leader's sweep enqueues both scopes and the workers run them.
	waitJobs := func(want map[string]int) {
		t.Helper()
		got := map[string]int{}
		timeout := time.After(30 * time.Second)
		for len(got) < len(want) || !equalCounts(got, want) {
			select {
			case ev := <-events:
				require.Equal(t, river.EventKindJobCompleted, ev.Kind, "job %s: %v", ev.Job.Kind, ev.Job.Errors)
				key := ev.Job.Kind
				if ev.Job.Kind == (Args{}).Kind() {
					var a Args
					require.NoError(t, json.Unmarshal(ev.Job.EncodedArgs, &a))
					key += " " + a.Scope
				}
				got[key]++
			case <-timeout:
				require.FailNow(t, "jobs did not complete", "got %v, want %v", got, want)
			}
		}
	}
	waitJobs(map[string]int{"credo.consolidate_sweep": 1, "credo.consolidate user:1": 1, "credo.consolidate user:2": 1})

	old, err := bundle.store.Get(ctx, ids[0])
	require.NoError(t, err)
	require.Equal(t, memory.StatusSuperseded, old.Status)
	require.Equal(t, []int64{ids[1]}, old.SupersededBy)
	require.Equal(t, 1, bundle.llm.ChatCount())

	// A completed job does not block the next one; the next finds nothing new.
	var n int
	err = pgx.BeginFunc(ctx, bundle.schema.Pool, func(tx pgx.Tx) error {
		n, err = Enqueue(ctx, tx, client, "user:1")
		return err
	})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	waitJobs(map[string]int{"credo.consolidate user:1": 1})
	require.Equal(t, 1, bundle.llm.ChatCount())
}

func equalCounts(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// A job cut short by MaxCalls completes and enqueues its follow-up in one transaction,
// which the unique option allows because the job is completed by then.
func TestFollowUpJobThroughRiver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, bundle := setup(t)
	bundle.llm.Handle(judge(miami, florida, "duplicate"))
	w, err := NewWorker(Config{Store: bundle.store, Chat: mustOpenAI(t, bundle.llm), EmbedModel: llmtest.DefaultEmbedModel, MaxCalls: 1})
	require.NoError(t, err)
	bundle.add(t, "user:1", memory.RevisionExtraction,
		fact(miami, "location", "2026-01-10"), fact(florida, "location", "2026-02-01"),
		fact(chrome, "browser_work", "2026-01-10"), fact(firefox, "browser_home", "2026-02-01"))

	workers := river.NewWorkers()
	require.NoError(t, river.AddWorkerSafely(workers, w))
	client, err := river.NewClient(riverpgxv5.New(bundle.schema.Pool), &river.Config{
		Queues:            map[string]river.QueueConfig{Queue: {MaxWorkers: 1}},
		Workers:           workers,
		FetchPollInterval: 100 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
		TestOnly:          true,
	})
	require.NoError(t, err)
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer cancel()
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(stopCtx))
	})

	err = pgx.BeginFunc(ctx, bundle.schema.Pool, func(tx pgx.Tx) error {
		_, err := Enqueue(ctx, tx, client, "user:1")
		return err
	})
	require.NoError(t, err)
	for range 2 {
		select {
		case ev := <-events:
			require.Equal(t, river.EventKindJobCompleted, ev.Kind, "%v", ev.Job.Errors)
		case <-time.After(30 * time.Second):
			require.FailNow(t, "jobs did not complete")
		}
	}
	require.Equal(t, 2, bundle.llm.ChatCount(), "one cluster per job")
	var wm *time.Time
	require.NoError(t, bundle.schema.Pool.QueryRow(ctx, "SELECT watermark FROM scope_consolidation WHERE scope = 'user:1'").Scan(&wm))
	require.NotNil(t, wm)
	require.Equal(t, []string{"user:1", "user:1"}, bundle.jobScopes(t, "completed"))
}
