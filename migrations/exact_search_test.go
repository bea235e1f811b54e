package migrations_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/migrations"
)

// TestExactSearchMigration: migration 006 drops the HNSW indexes that every scope shared,
// keeps every vector, and goes down and up again.
func TestExactSearchMigration(t *testing.T) {
	t.Parallel()
	dbtest.SkipOnCitus(t, preCitusSchema)
	ctx := context.Background()
	schema := dbtest.New(t)
	require.NoError(t, migrations.MigrateDownTo(ctx, schema.Pool, 5))

	// What the previous version left: a model's shared index, and a belief embedded with it.
	_, err := schema.Pool.Exec(ctx, `INSERT INTO embedding_model (model, dim) VALUES ('m', 3);
		CREATE INDEX belief_embedding_0123456789ab_idx ON belief USING hnsw ((embedding::vector(3)) vector_cosine_ops) WHERE embed_model = 'm';
		CREATE INDEX revision_event_embedding_0123456789ab_idx ON revision_event USING hnsw ((embedding::vector(3)) vector_cosine_ops) WHERE embed_model = 'm';
		INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin, valid_from, recorded_at, last_seen_at, embedding, embed_model)
		VALUES ('user:1', 'user', 'home', 'attribute', 'User lives in Miami', 0.9, 'user_stated', now(), now(), now(), '[1,0,0]', 'm')`)
	require.NoError(t, err)

	hnsw := func() []string {
		rows, err := schema.Pool.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			JOIN pg_am am ON am.oid = c.relam WHERE n.nspname = $1 AND am.amname = 'hnsw' ORDER BY 1`, schema.Name)
		require.NoError(t, err)
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return names
	}
	require.Len(t, hnsw(), 2)

	require.NoError(t, migrations.Migrate(ctx, schema.Pool, nil))
	require.Empty(t, hnsw(), "no index is shared by scopes")
	var vec string
	require.NoError(t, schema.Pool.QueryRow(ctx, "SELECT embedding::text FROM belief WHERE scope = 'user:1'").Scan(&vec))
	require.Equal(t, "[1,0,0]", vec)

	require.NoError(t, migrations.MigrateDownTo(ctx, schema.Pool, 5))
	require.NoError(t, migrations.Migrate(ctx, schema.Pool, nil))
	pending, err := migrations.Pending(ctx, schema.Pool)
	require.NoError(t, err)
	require.Empty(t, pending)
}
