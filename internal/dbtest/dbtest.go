// Package dbtest gives each test its own PostgreSQL schema with credo's and River's
// migrations applied, so tests run in parallel against a real database.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/migrations"
)

// EnvURL names the variable holding the test database's URL.
const EnvURL = "CREDO_TEST_DATABASE_URL"

// DefaultURL is the database .ci/setup-postgres creates.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/credo_test?sslmode=disable"

// URL is the test database's URL.
func URL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// ShardCount is the shard count of a test schema's distributed tables on Citus: a few,
// enough to spread over two workers, so that each test's schema is quick to create.
const ShardCount = 4

// Schema is one test's isolated schema.
type Schema struct {
	Name string
	// URL connects with search_path set to the schema, for subprocesses and other clients.
	URL  string
	Pool *pgxpool.Pool
	// Citus says the test database is a Citus coordinator.
	Citus bool
}

// New creates a fresh schema, migrates it, and drops it when the test ends. On Citus the
// schema may be one an earlier test used, emptied (see reuse.go), and is emptied and
// kept for the next when the test ends.
func New(tb testing.TB) *Schema {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	admin, err := pgx.Connect(ctx, URL())
	require.NoError(tb, err, "connect to the test database (%s=%s); run .ci/setup-postgres", EnvURL, URL())
	defer admin.Close(ctx)
	citus := isCitus(ctx, tb, admin)

	var (
		name, key string
		want      shape
	)
	if citus {
		key, err = poolKey()
		require.NoError(tb, err)
		name, want, err = takeReusable(ctx, admin, key)
		require.NoError(tb, err)
	}
	reused := name != ""
	if !reused {
		name = "test_" + randomHex(6)
		unlock := lockOnCitus(ctx, tb, admin, citus)
		_, err = admin.Exec(ctx, "CREATE SCHEMA "+name)
		unlock()
		require.NoError(tb, err)
	}

	cfg, err := pgxpool.ParseConfig(URL())
	require.NoError(tb, err)
	// public holds the vector extension's type and operators.
	cfg.ConnConfig.RuntimeParams["search_path"] = name + ",public"
	// Advisory locks are the database's: the application name tells this test's
	// sessions from those of tests running beside it (see WaitingOnAdvisoryLock).
	cfg.ConnConfig.RuntimeParams["application_name"] = name
	cfg.MaxConns = 10
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(tb, err)

	tb.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, URL())
		if err != nil {
			tb.Logf("drop schema %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if citus && !tb.Failed() {
			ok, err := giveBack(ctx, conn, name, key, want)
			if err != nil {
				tb.Logf("empty schema %s for reuse: %v", name, err)
			}
			if ok {
				return
			}
		}
		defer lockOnCitus(ctx, tb, conn, citus)()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			tb.Logf("drop schema %s: %v", name, err)
		}
	})

	if !reused {
		unlock := lockOnCitus(ctx, tb, admin, citus)
		err = migrations.MigrateWithConfig(ctx, pool, &migrations.Config{ShardCount: ShardCount})
		unlock()
		require.NoError(tb, err)
		if citus {
			want, err = readShape(ctx, admin, name)
			require.NoError(tb, err)
		}
	}
	return &Schema{Name: name, URL: withSearchPath(URL(), name), Pool: pool, Citus: citus}
}

// schemaLockKey serializes the creation and the drop of test schemas on Citus, and
// keeps them apart from the eval's throwaway schemas.
const schemaLockKey = migrations.SchemaLockKey

// isCitus says whether the database conn is on has the citus extension.
func isCitus(ctx context.Context, tb testing.TB, conn *pgx.Conn) bool {
	tb.Helper()
	var citus bool
	require.NoError(tb, conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')").Scan(&citus))
	return citus
}

// lockOnCitus takes, on Citus only, a lock that keeps one test's schema creation and
// migration apart from another's drop. A drop of distributed tables and a migration's
// DDL lock the coordinator's Citus catalogs in orders that deadlock under load (seen in
// CI); plain PostgreSQL needs no lock and runs them side by side. It returns the unlock.
func lockOnCitus(ctx context.Context, tb testing.TB, conn *pgx.Conn, citus bool) func() {
	tb.Helper()
	if !citus {
		return func() {}
	}
	_, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", schemaLockKey)
	require.NoError(tb, err)
	return func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", schemaLockKey)
	}
}

// WaitingOnAdvisoryLock counts this schema's sessions waiting for an advisory lock,
// leaving out those of other tests that share the database.
func (s *Schema) WaitingOnAdvisoryLock(ctx context.Context) (int, error) {
	var n int
	err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND NOT l.granted AND a.application_name = $1`, s.Name).Scan(&n)
	return n, err
}

func withSearchPath(url, schema string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema + ",public"
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("dbtest: random: %v", err))
	}
	return hex.EncodeToString(b)
}
