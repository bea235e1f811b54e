//go:build citus

package extract_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
)

// TestCitusRouterExtraction: ingest and extraction through River on Citus are
// single-shard work per scope: the episodes' insert, the scope's next pending episode,
// its candidates and examples, the apply and the episode's state, with the store and
// the workers where any multi-shard query fails.
func TestCitusRouterExtraction(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	p := pipelinetest.New(t, &pipelinetest.Options{Router: true})
	p.LLM.OnPrompt("I moved to Miami.", llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User lives in Miami", Attribute: "home",
		Resolves: &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}})})
	p.LLM.OnPrompt("I live in New York.", llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User lives in New York", Attribute: "home"})})

	const scope = "acme/user:1"
	res := p.Enqueue(t, pipelinetest.T(scope, "c1", "2026-02-01T10:00:00Z", "I live in New York."),
		pipelinetest.T(scope, "c2", "2026-03-01T10:00:00Z", "I moved to Miami."),
		pipelinetest.T("acme/user:2", "c1", "2026-02-01T10:00:00Z", "I live in New York."))
	require.Len(t, res.EpisodeIDs, 3)
	p.Drain(t)

	for _, id := range res.EpisodeIDs {
		require.Equal(t, "applied", p.Episode(t, id).State, "episode %d", id)
	}
	current, err := p.Store.Current(ctx, scope)
	require.NoError(t, err)
	require.Len(t, current, 1)
	require.Equal(t, "User lives in Miami", current[0].Statement, "the second episode revised the first one's belief")
	events, err := p.Store.Events(ctx, scope, 0)
	require.NoError(t, err)
	require.Len(t, events, 1)

	// The same transcripts again are duplicates, found on their scope's shard.
	again := p.Enqueue(t, pipelinetest.T(scope, "c1", "2026-02-01T10:00:00Z", "I live in New York."))
	require.Equal(t, res.EpisodeIDs[:1], again.EpisodeIDs)
}

// TestCitusReconcile: the reconcile, which spans scopes, finds on every shard the scopes
// with pending episodes and no job.
func TestCitusReconcile(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	p := pipelinetest.New(t, nil)
	require.NoError(t, p.Client.Stop(ctx)) // the jobs stay queued: this test counts them
	for i, scope := range []string{"user:1", "user:2", "acme/user:3"} {
		tr := pipelinetest.T(scope, "c", "2026-02-01T10:00:00Z", "I live in New York.")
		_, err := p.Schema.Pool.Exec(ctx, `INSERT INTO episode (scope, messages, content_hash, occurred_at)
			VALUES ($1, $2, $3, $4), ($1, $2, $3 || 'b', $4)`, tr.Scope, tr.Messages, tr.ContentHash(), *tr.OccurredAt)
		require.NoError(t, err, "scope %d", i)
	}
	reconcile := func() int {
		var n int
		require.NoError(t, pgx.BeginFunc(ctx, p.Schema.Pool, func(tx pgx.Tx) (err error) {
			n, err = extract.Reconcile(ctx, tx, p.Client)
			return err
		}))
		return n
	}
	require.Equal(t, 3, reconcile(), "one job per scope with pending episodes")
	require.Zero(t, reconcile(), "each scope has its job now")
}
