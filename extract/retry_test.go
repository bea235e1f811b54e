package extract_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

func TestRetryFailedEpisode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, &pipelinetest.Options{MaxAttempts: 1})
	p.LLM.Script(llmtest.Reply{Status: 502})
	res := p.Enqueue(t, pipelinetest.T("user:1", "nyc", "2026-01-15T10:00:00Z", "I live in New York City."))
	p.Drain(t)
	id := res.EpisodeIDs[0]
	require.Equal(t, string(memory.EpisodeFailed), p.Episode(t, id).State)

	retry := func(scope string, id int64) error {
		return pgx.BeginFunc(ctx, p.Schema.Pool, func(tx pgx.Tx) error {
			return extract.Retry(ctx, tx, p.Client, scope, id)
		})
	}
	require.ErrorIs(t, retry("user:2", id), extract.ErrNotRetryable, "another scope's episode is not retried")
	require.ErrorIs(t, retry("user:1", id+100), extract.ErrNotRetryable)
	require.Equal(t, string(memory.EpisodeFailed), p.Episode(t, id).State)

	p.LLM.Script(llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: nyc, Attribute: "location"})})
	require.NoError(t, retry("user:1", id))
	p.Drain(t)
	ep := p.Episode(t, id)
	require.Equal(t, string(memory.EpisodeApplied), ep.State)
	require.Equal(t, 1, ep.Attempts, "attempts start again from none")
	require.Nil(t, ep.LastError)
	current, err := p.Store.Current(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, []string{nyc}, statements(current))
	require.Equal(t, 2, countRows(t, p, "SELECT count(*) FROM river_job WHERE state = 'completed'"),
		"the retry ran in a job of the scope")

	require.ErrorIs(t, retry("user:1", id), extract.ErrNotRetryable, "an applied episode is not retried")
}

func TestRetryJoinsTheScopesJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, &pipelinetest.Options{MaxAttempts: 1})
	p.LLM.Script(llmtest.Reply{Status: 502})
	res := p.Enqueue(t, pipelinetest.T("user:1", "a", "2026-01-15T10:00:00Z", "I have a cat."))
	p.Drain(t)
	require.NoError(t, p.Client.Stop(ctx), "no job runs: the scope's job waits")
	p.LLM.Script()
	p.Enqueue(t, pipelinetest.T("user:1", "b", "2026-01-16T10:00:00Z", "I have a dog."))
	err := pgx.BeginFunc(ctx, p.Schema.Pool, func(tx pgx.Tx) error {
		return extract.Retry(ctx, tx, p.Client, "user:1", res.EpisodeIDs[0])
	})
	require.NoError(t, err)
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM river_job WHERE state = 'available' AND args->>'scope' = 'user:1'"),
		"one job per scope: the retry joins the job the scope has")
}
