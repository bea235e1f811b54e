package consolidate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/consolidate"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
)

// TestPassEnqueuesScopeIndex: a consolidation job over a scope past the exact limit
// enqueues the build of the scope's own index as a job of its own, which builds it.
func TestPassEnqueuesScopeIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, &pipelinetest.Options{Consolidate: true, ExactSearchLimit: 100})
	model := p.Provider.EmbedModel()
	require.NoError(t, p.Store.EnsureEmbeddingModel(ctx, model, llmtest.DefaultDim))
	var rows []dbtest.Row
	for i := range 150 {
		s := fmt.Sprintf("User owns record %d", i)
		rows = append(rows, dbtest.Row{Scope: "user:big", Statement: s, Vector: llmtest.Embed(s, llmtest.DefaultDim)})
	}
	dbtest.InsertBeliefs(t, p.Schema.Pool, model, rows)
	p.Consolidate(t, "user:big")
	p.Drain(t)

	done, err := p.Schema.Pool.Query(ctx, "SELECT kind FROM river_job WHERE state = 'completed' ORDER BY id")
	require.NoError(t, err)
	kinds, err := pgx.CollectRows(done, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, kinds, consolidate.IndexArgs{}.Kind())
	scopes, err := p.Store.IndexedScopes(ctx, model)
	require.NoError(t, err)
	require.Equal(t, []string{"user:big"}, scopes)
}
