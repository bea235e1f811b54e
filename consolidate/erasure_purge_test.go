package consolidate

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

// A whole-scope purge that commits while a consolidation job asks the model leaves no
// row naming the scope once the job ends: no watermark, no follow-up job (the pass was
// cut short by MaxCalls, so it would enqueue one), and not the job's own row.
func TestPurgeDuringAPassLeavesNoFollowUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, bundle := setup(t)
	var (
		once     sync.Once
		purgeErr error
	)
	judged := judge(miami, florida, "duplicate")
	bundle.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		once.Do(func() { _, purgeErr = bundle.store.Purge(ctx, memory.Selection{Scope: "user:1", All: true}) })
		return judged(req)
	})
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
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(stopCtx))
	})
	require.NoError(t, pgx.BeginFunc(ctx, bundle.schema.Pool, func(tx pgx.Tx) error {
		_, err := Enqueue(ctx, tx, client, "user:1")
		return err
	}))
	// The job's row is deleted as it completes (its scope was erased), so the test
	// waits for the queue to empty.
	require.Eventually(t, func() bool {
		var left int
		require.NoError(t, bundle.schema.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job
			WHERE state IN ('available', 'running', 'scheduled', 'pending')`).Scan(&left))
		return left == 0 && bundle.llm.ChatCount() > 0
	}, 30*time.Second, 50*time.Millisecond)
	require.NoError(t, purgeErr)
	require.Equal(t, 1, bundle.llm.ChatCount(), "the purge ran during the model's call")
	require.Empty(t, bundle.schema.Mentions(t, "user:1"), "no row names the erased scope")
}

// A drop of an erased scope's index left to do (the purge could not drop it) is
// enqueued by the next sweep, and its job drops it.
func TestSweepEnqueuesLeftIndexDrops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, bundle := setup(t)
	client := bundle.insertClient(t)
	bundle.sweep(t, client)
	require.Zero(t, bundle.jobsOf(t, DropIndexesArgs{}.Kind()), "nothing to drop, no job")

	_, err := bundle.schema.Pool.Exec(ctx, "CREATE INDEX belief_scope_0123456789abcdef_idx ON belief (id) WHERE scope = 'user:gone'")
	require.NoError(t, err)
	_, err = bundle.schema.Pool.Exec(ctx, "INSERT INTO scope_index_drop (name) VALUES ('belief_scope_0123456789abcdef_idx')")
	require.NoError(t, err)
	bundle.sweep(t, client)
	bundle.sweep(t, client)
	require.Equal(t, 1, bundle.jobsOf(t, DropIndexesArgs{}.Kind()), "one job while it waits")

	require.NoError(t, NewDropIndexesWorker(bundle.store, nil).Work(ctx, nil))
	require.Empty(t, bundle.schema.Mentions(t, "user:gone"))
	var left int
	require.NoError(t, bundle.schema.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes
		WHERE schemaname = current_schema() AND indexname = 'belief_scope_0123456789abcdef_idx'`).Scan(&left))
	require.Zero(t, left, "the index is dropped")
}

// jobsOf counts the jobs of kind.
func (b *testBundle) jobsOf(t *testing.T, kind string) int {
	t.Helper()
	var n int
	require.NoError(t, b.schema.Pool.QueryRow(context.Background(), "SELECT count(*) FROM river_job WHERE kind = $1", kind).Scan(&n))
	return n
}
