package metrics

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// TestEndToEnd runs the real extraction job on River against PostgreSQL and the fake
// LLM, wired as cmd/worker wires metrics, and scrapes the result.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	srv := llmtest.NewServer(t)
	p, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)

	m := New()
	chat, embed := m.WrapProvider(p), m.WrapProvider(p)
	store := memory.NewStore(schema.Pool, nil)
	worker, err := extract.NewWorker(extract.Config{
		Store: store, Chat: chat, Embed: embed, EmbedModel: embed.EmbedModel(), Observer: m,
		MalformedRetries: -1,
	})
	require.NoError(t, err)
	workers := river.NewWorkers()
	require.NoError(t, river.AddWorkerSafely(workers, worker))
	client, err := river.NewClient(riverpgxv5.New(schema.Pool), &river.Config{
		Queues:            map[string]river.QueueConfig{extract.Queue: {MaxWorkers: 2}},
		Workers:           workers,
		FetchPollInterval: 20 * time.Millisecond,
		FetchCooldown:     5 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	m.WatchRiver(watchCtx, client)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})

	const (
		nyc   = "User lives in New York City"
		miami = "User lives in Miami"
	)
	srv.OnPrompt("I live in New York City", llmtest.Reply{PromptTokens: 500, CompletionTokens: 60, Content: `{"reasoning":"","facts":[
		{"statement":"` + nyc + `","subject":"user","attribute":"location","kind":"attribute","valid_from":"2026-01-15",
		 "confidence":0.9,"origin":"user_stated","quote":"I live in New York City","resolves":null}]}`})
	srv.OnPrompt("I moved to Miami last month", llmtest.Reply{PromptTokens: 600, CompletionTokens: 70, Content: `{"reasoning":"","facts":[
		{"statement":"` + miami + `","subject":"user","attribute":"location","kind":"attribute","valid_from":"2026-02-20",
		 "confidence":0.9,"origin":"user_stated","quote":"I moved to Miami last month",
		 "resolves":{"session_index":0,"action":"supersede","reason":"temporal"}}]}`})
	srv.OnPrompt("gibberish please", llmtest.Reply{Content: "not JSON at all"})

	enqueue := func(id, at, says string) {
		t.Helper()
		occurred, err := time.Parse(time.RFC3339, at)
		require.NoError(t, err)
		tr := transcript.Transcript{Scope: "user:1", ID: id, OccurredAt: &occurred, Messages: []transcript.Message{
			{Role: transcript.RoleUser, Content: says}, {Role: transcript.RoleAssistant, Content: "Noted."}}}
		require.NoError(t, pgx.BeginFunc(ctx, schema.Pool, func(tx pgx.Tx) error {
			_, err := extract.Enqueue(ctx, tx, client, []transcript.Transcript{tr}, time.Now(), nil)
			return err
		}))
	}
	jobs := func(outcome string) float64 {
		return scrapeOf(t, m).value("credo_jobs_total", "kind="+extract.Args{}.Kind(), "outcome="+outcome)
	}

	enqueue("nyc", "2026-01-15T10:00:00Z", "I live in New York City.")
	require.Eventually(t, func() bool { return jobs(JobCompleted) == 1 }, 30*time.Second, 20*time.Millisecond)
	enqueue("miami", "2026-03-20T14:00:00Z", "I moved to Miami last month.")
	require.Eventually(t, func() bool { return jobs(JobCompleted) == 2 }, 30*time.Second, 20*time.Millisecond)
	enqueue("bad", "2026-03-21T14:00:00Z", "gibberish please")
	// A malformed answer fails its episode alone; the scope's job completes.
	require.Eventually(t, func() bool { return jobs(JobCompleted) == 3 }, 30*time.Second, 20*time.Millisecond)

	current, err := store.Current(ctx, "user:1")
	require.NoError(t, err)
	require.Len(t, current, 1)
	require.Equal(t, miami, current[0].Statement)

	s := scrapeOf(t, m)
	chatLabels := []string{"provider=openai", "model=" + llmtest.DefaultChatModel, "kind=chat"}
	require.Equal(t, 2.0, s.value("credo_llm_calls_total", append(chatLabels, "result=ok")...))
	require.Equal(t, 1.0, s.value("credo_llm_calls_total", append(chatLabels, "result=malformed")...))
	require.Equal(t, 2.0, s.value("credo_llm_calls_total", "kind=embed", "result=ok"), "one embedding call per applied episode")
	require.Equal(t, 3.0, s.value("credo_llm_call_duration_seconds", chatLabels...))
	require.GreaterOrEqual(t, s.value("credo_llm_tokens_total", "direction=prompt", "model="+llmtest.DefaultChatModel), 1100.0)
	require.GreaterOrEqual(t, s.value("credo_llm_tokens_total", "direction=completion", "model="+llmtest.DefaultChatModel), 130.0)

	require.Equal(t, 2.0, s.value("credo_extractions_total", "result=ok"))
	require.Equal(t, 1.0, s.value("credo_extractions_total", "result=malformed"))
	require.Equal(t, 3.0, s.value("credo_extraction_prompt_chars"))
	require.Equal(t, 3.0, s.value("credo_extraction_candidates"))
	require.Equal(t, 2.0, s.sum("credo_extraction_candidates"), "NYC shown to the Miami extraction, Miami to the gibberish one")
	require.Equal(t, 1.0, s.value("credo_belief_outcomes_total", "outcome=accepted"))
	require.Equal(t, 1.0, s.value("credo_belief_outcomes_total", "outcome=superseded"))
	require.Equal(t, 1.0, s.value("credo_revisions_total", "action=supersede", "reason=temporal"))
	require.Equal(t, 3.0, s.value("credo_job_duration_seconds", "kind="+extract.Args{}.Kind()))
	require.Equal(t, 0.0, s.value("credo_extraction_stale_total"))
	require.Equal(t, 0.0, jobs(JobFailed))
	require.Equal(t, 0.0, jobs(JobRetried))
}

// TestWatchRiverEndsWithItsContextOrClient makes sure the watching goroutine does not
// outlive what it watches.
func TestWatchRiverEndsWithItsContextOrClient(t *testing.T) {
	t.Parallel()
	schema := dbtest.New(t)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[extract.Args]) error { return nil }))
	client, err := river.NewClient(riverpgxv5.New(schema.Pool), &river.Config{
		Queues:  map[string]river.QueueConfig{extract.Queue: {MaxWorkers: 1}},
		Workers: workers,
		Logger:  slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	m := New()

	// Ended by its context.
	ctx, cancel := context.WithCancel(context.Background())
	byContext := m.WatchRiver(ctx, client)
	cancel()
	requireClosed(t, byContext)

	// Ended by the client's stop, which closes the subscription.
	byStop := m.WatchRiver(context.Background(), client)
	require.NoError(t, client.Start(context.Background()))
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer stopCancel()
	require.NoError(t, client.Stop(stopCtx))
	requireClosed(t, byStop)
}

func requireClosed(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not stop")
	}
}
