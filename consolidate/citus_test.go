//go:build citus

package consolidate

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/testclock"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

// TestCitusRouterConsolidation: a consolidation pass of a scope (its watermark, seeds,
// neighbours, judged clusters, the revision it applies) is single-shard work on Citus:
// the store runs where any multi-shard query fails.
func TestCitusRouterConsolidation(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	schema := dbtest.New(t)
	clock := testclock.New(time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Second))
	store := memory.NewStore(schema.RouterPool(t), &memory.Config{Now: clock.Now})
	// Registering the model writes a reference table: once, before the per-scope paths.
	require.NoError(t, memory.NewStore(schema.Pool, nil).EnsureEmbeddingModel(ctx, llmtest.DefaultEmbedModel, 64))
	srv := llmtest.NewServer(t, llmtest.WithAnchors(anchors))
	chat, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	w, err := NewWorker(Config{Store: store, Chat: chat, EmbedModel: llmtest.DefaultEmbedModel})
	require.NoError(t, err)
	bundle := &testBundle{schema: schema, store: store, llm: srv, clock: clock}

	const scope = "acme/user:1"
	bundle.add(t, scope, memory.RevisionExtraction, fact(miami, "location", "2026-01-10"), fact(chrome, "browser_work", "2026-01-10"))
	bundle.add(t, scope, memory.RevisionExtraction, fact(florida, "city", "2026-02-01"), fact(firefox, "browser_home", "2026-02-01"))
	srv.Handle(judge(miami, florida, "duplicate"))

	rep, err := w.RunScope(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Applied)
	require.Len(t, rep.Resolutions, 1)
	require.Equal(t, memory.ReasonDuplicate, rep.Resolutions[0].Reason)

	// The next pass finds the judged clusters and the watermark on the same shard.
	rep, err = w.RunScope(ctx, scope)
	require.NoError(t, err)
	require.Zero(t, rep.ChatCalls)
}
