package dbtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// RequireCitus fails tb unless the test database is a Citus coordinator with active
// workers. The Citus tests (build tag citus, `make test-citus`) run against
// scripts/citus-cluster: without it they fail, never skip, so a missing cluster is seen.
// It returns the number of active workers.
func RequireCitus(tb testing.TB) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL())
	require.NoError(tb, err, "connect to the Citus coordinator (%s=%s); run scripts/citus-cluster up", EnvURL, URL())
	defer conn.Close(ctx)
	var workers int
	err = conn.QueryRow(ctx, "SELECT count(*) FROM citus_get_active_worker_nodes()").Scan(&workers)
	require.NoError(tb, err, "%s=%s is not a Citus coordinator; run scripts/citus-cluster up and point %s at `scripts/citus-cluster url`",
		EnvURL, URL(), EnvURL)
	require.Positive(tb, workers, "the Citus coordinator has no active worker")
	return workers
}

// Citus says whether the test database is a Citus coordinator (has the citus
// extension), for the few tests whose margins of time depend on it.
func Citus(tb testing.TB) bool {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL())
	require.NoError(tb, err, "connect to the test database (%s=%s)", EnvURL, URL())
	defer conn.Close(ctx)
	return isCitus(ctx, tb, conn)
}

// RouterPool is a pool on s's schema where every query that Citus would run on more
// than one shard fails: citus.multi_task_query_log_level = error. A per-scope path run
// on it proves that it is a single-shard (router) query or transaction. The pool closes
// when the test ends.
func (s *Schema) RouterPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(URL())
	require.NoError(tb, err)
	cfg.ConnConfig.RuntimeParams["search_path"] = s.Name + ",public"
	cfg.ConnConfig.RuntimeParams["application_name"] = s.Name
	cfg.ConnConfig.RuntimeParams["citus.multi_task_query_log_level"] = "error"
	cfg.MaxConns = 10
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	return pool
}

// SkipOnCitus skips tb when the test database is a Citus coordinator, for a test that
// genuinely cannot run on a cluster; limitation says why, and docs/operations.md ("Tests
// on a real cluster") lists every such test.
func SkipOnCitus(tb testing.TB, limitation string) {
	tb.Helper()
	if Citus(tb) {
		tb.Skip("not on Citus: " + limitation)
	}
}
