package migrations_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/migrations"
)

func TestMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t) // migrated once already

	pending, err := migrations.Pending(ctx, schema.Pool)
	require.NoError(t, err)
	require.Empty(t, pending)

	// Several workers starting together wait for each other and apply nothing twice.
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() { errs <- migrations.Migrate(ctx, schema.Pool, nil) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	rows, err := schema.Pool.Query(ctx, "SELECT line, version FROM river_migration ORDER BY line, version")
	require.NoError(t, err)
	type version struct {
		Line    string
		Version int
	}
	versions, err := pgx.CollectRows(rows, pgx.RowToStructByPos[version])
	require.NoError(t, err)
	require.Contains(t, versions, version{migrations.Line, 1}, "credo's line is versioned by rivermigrate")
	require.Contains(t, versions, version{"main", 1})
	seen := map[version]bool{}
	for _, v := range versions {
		require.False(t, seen[v], "version applied twice: %v", v)
		seen[v] = true
	}
}

// TestMigrateConfig: a shard count Citus would refuse is an error before anything is
// migrated; on plain PostgreSQL a valid one changes nothing.
func TestMigrateConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	for _, n := range []int{-1, 64001} {
		require.ErrorContains(t, migrations.MigrateWithConfig(ctx, schema.Pool, &migrations.Config{ShardCount: n}),
			"is not between 1 and 64000")
	}
	require.NoError(t, migrations.MigrateWithConfig(ctx, schema.Pool, &migrations.Config{ShardCount: 8}))
}

// preCitusSchema is why the tests of migrations before 010 skip on a cluster: they go
// down to a version whose tables are keyed by id alone, which Citus cannot distribute
// (010 made scope lead every key), and Citus refuses the down migrations' several DDL
// statements in one string ("cannot insert multiple commands into a prepared
// statement"). credo has no down path for operators; the up path runs under every test
// on the cluster.
const preCitusSchema = "migrations before 010 are keyed by id, which Citus cannot distribute, and their tests go down to them"
