package learning

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

// TestSimilarUsesTheVectorIndex shows retrieval in a scope with many events scans the
// model's HNSW index rather than every event of the scope. (For a scope with few events
// the planner rightly prefers the scope's btree and a sort.)
func TestSimilarUsesTheVectorIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	store := memory.NewStore(schema.Pool, nil)
	const model, dim = "m", 32
	require.NoError(t, store.EnsureEmbeddingModel(ctx, model, dim))
	res, err := store.Apply(ctx, &memory.Batch{Scope: "user:1", Origin: memory.RevisionOperator,
		Facts: []memory.Fact{{Statement: "User drinks tea", Attribute: "drink", Confidence: 1, Origin: memory.OriginUserStated}}})
	require.NoError(t, err)

	const n = 2000
	olds, vecs := make([]string, n), make([]string, n)
	for i := range n {
		olds[i] = fmt.Sprintf("User drinks blend %d", i)
		vecs[i] = pgvector.NewVector(llmtest.Embed(olds[i], dim)).String()
	}
	_, err = schema.Pool.Exec(ctx, `INSERT INTO revision_event (scope, action, reason, origin, old_belief_id,
			old_statement, embedding, embed_model, created_at)
		SELECT CASE WHEN ordinality % 10 = 0 THEN 'user:other' ELSE 'user:7' END, 'retract', 'temporal', 'extraction', $1, o, v::vector, $2, now()
		FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(o, v)`, res.Facts[0].BeliefID, model, olds, vecs)
	require.NoError(t, err)
	_, err = schema.Pool.Exec(ctx, "ANALYZE revision_event")
	require.NoError(t, err)

	rows, err := schema.Pool.Query(ctx, "EXPLAIN "+similarSQL(dim),
		[]string{"user:7"}, model, pgvector.NewVector(llmtest.Embed("User drinks blend 7", dim)), 12)
	require.NoError(t, err)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, strings.Join(plan, "\n"), "Index Scan using revision_event_embedding_", strings.Join(plan, "\n"))

	found, err := NewRetriever(schema.Pool, 0, "").Similar(ctx, "user:7", model, llmtest.Embed("User drinks blend 7", dim))
	require.NoError(t, err)
	require.Len(t, found, DefaultExamples)
	for _, e := range found {
		require.Equal(t, "user:7", e.Scope)
	}
}
