//go:build citus

package dbtest_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// TestCitusSchema: a test's own schema works on a Citus coordinator. A table distributed
// in it gets shards on the workers, and dropping the schema at the test's end removes
// them, on the coordinator and on every worker.
func TestCitusSchema(t *testing.T) {
	workers := dbtest.RequireCitus(t)
	require.GreaterOrEqual(t, workers, 2, "scripts/citus-cluster starts two workers")
	ctx := context.Background()

	var name string
	t.Run("distribute", func(t *testing.T) {
		schema := dbtest.New(t)
		name = schema.Name
		_, err := schema.Pool.Exec(ctx, `CREATE TABLE citus_probe (scope text NOT NULL, id bigint GENERATED ALWAYS AS IDENTITY,
			PRIMARY KEY (scope, id))`)
		require.NoError(t, err)
		_, err = schema.Pool.Exec(ctx, "SELECT create_distributed_table('citus_probe', 'scope', shard_count => 4)")
		require.NoError(t, err)
		_, err = schema.Pool.Exec(ctx, "INSERT INTO citus_probe (scope) SELECT 'user:' || i FROM generate_series(1, 20) i")
		require.NoError(t, err)

		var shards, nodes int
		require.NoError(t, schema.Pool.QueryRow(ctx, `SELECT count(DISTINCT s.shardid), count(DISTINCT p.groupid)
			FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)
			WHERE s.logicalrelid = 'citus_probe'::regclass`).Scan(&shards, &nodes))
		require.Equal(t, 4, shards)
		require.Equal(t, workers, nodes, "the shards are spread over the workers")
		require.Equal(t, workers, schemaOnWorkers(t, schema.Pool, name), "the schema is created on every worker")
	})

	// The subtest's cleanup dropped its schema.
	conn, err := pgx.Connect(ctx, dbtest.URL())
	require.NoError(t, err)
	defer conn.Close(ctx)
	var left int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::text LIKE $1 || '.%'`,
		name).Scan(&left))
	require.Zero(t, left, "no distributed table is left")
	require.Zero(t, schemaOnWorkers(t, conn, name), "the schema and its shards are gone from the workers")
}

// schemaOnWorkers counts the workers where schema exists.
func schemaOnWorkers(t *testing.T, db dbtest.DB, schema string) int {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Query(ctx, "SELECT node_name, node_port FROM citus_get_active_worker_nodes()")
	require.NoError(t, err)
	type node struct {
		Host string
		Port int
	}
	nodes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[node])
	require.NoError(t, err)
	u, err := url.Parse(dbtest.URL())
	require.NoError(t, err)
	n := 0
	for _, w := range nodes {
		u.Host = fmt.Sprintf("%s:%d", w.Host, w.Port)
		conn, err := pgx.Connect(ctx, u.String())
		require.NoError(t, err)
		var found bool
		require.NoError(t, conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&found))
		require.NoError(t, conn.Close(ctx))
		if found {
			n++
		}
	}
	return n
}
