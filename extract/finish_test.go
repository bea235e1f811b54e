package extract

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// TestFinishWaitsForAnEnqueueUnderWay: a scope's job that finds nothing left waits for
// an enqueue of its scope that is under way, and then sees its episode instead of
// completing: the enqueue's job would have been skipped as a duplicate of this one.
func TestFinishWaitsForAnEnqueueUnderWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	provider, err := llm.NewOpenAI(llmtest.NewServer(t).OpenAIConfig())
	require.NoError(t, err)
	w, err := NewWorker(Config{Store: memory.NewStore(schema.Pool, nil), Chat: provider, Embed: provider, EmbedModel: provider.EmbedModel()})
	require.NoError(t, err)

	tx, err := schema.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) // committed below
	// Advisory locks are the database's, not the schema's: a scope of this test alone.
	scope := "finish:" + schema.Name
	require.NoError(t, lockQueues(ctx, tx, []string{scope}))
	tr := transcript.Transcript{Scope: scope, Messages: []transcript.Message{{Role: transcript.RoleUser, Content: "I have a cat."}}}
	_, err = tx.Exec(ctx, `INSERT INTO episode (scope, messages, content_hash, occurred_at) VALUES ($1, $2, $3, now())`,
		tr.Scope, tr.Messages, tr.ContentHash())
	require.NoError(t, err)

	type result struct {
		done bool
		err  error
	}
	got := make(chan result, 1)
	job := &river.Job[Args]{JobRow: &rivertype.JobRow{ID: 1, State: rivertype.JobStateRunning}, Args: Args{Scope: scope}}
	go func() {
		done, err := w.finish(ctx, job)
		got <- result{done, err}
	}()
	require.Eventually(t, func() bool {
		waiting, err := schema.WaitingOnAdvisoryLock(ctx)
		return err == nil && waiting == 1
	}, 10*time.Second, 5*time.Millisecond, "the job waits for the enqueue's lock")
	require.NoError(t, tx.Commit(ctx))

	select {
	case r := <-got:
		require.NoError(t, r.err)
		require.False(t, r.done, "the job goes on with the new episode")
	case <-time.After(10 * time.Second):
		require.FailNow(t, "finish did not return")
	}
}
