//go:build citus

package migrations_test

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/migrations"
)

// placement is how Citus holds one table of a schema.
type placement struct {
	Table string
	// Method is h for a table distributed by hash, n for a reference table.
	Method string
	Column *string
	Group  int
	Shards int
}

func placements(t *testing.T, db dbtest.DB, schema string) map[string]placement {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT c.relname, p.partmethod::text,
			column_to_column_name(p.logicalrelid, p.partkey), p.colocationid,
			(SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid)::int
		FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
		WHERE c.relnamespace = $1::regnamespace`, schema)
	require.NoError(t, err)
	ps, err := pgx.CollectRows(rows, pgx.RowToStructByPos[placement])
	require.NoError(t, err)
	out := map[string]placement{}
	for _, p := range ps {
		out[p.Table] = p
	}
	return out
}

// TestCitusDistribute: on a database with the citus extension, the migrations distribute
// every per-scope table by scope, co-located, make the scope-less tables reference
// tables and leave River's tables local; migrating again, by several processes at once,
// changes nothing.
func TestCitusDistribute(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	schema := dbtest.New(t) // migrated, so distributed

	check := func() {
		t.Helper()
		got := placements(t, schema.Pool, schema.Name)
		group := got["episode"].Group
		for _, table := range []string{"episode", "belief", "revision_event", "belief_conflict", "belief_dependency",
			"scope_consolidation", "consolidation_judgment", "scope_vector_index", "change_head", "change", "webhook_delivery",
			"entity", "entity_alias", "slot_synonym", "scope_common_words"} {
			p, ok := got[table]
			require.True(t, ok, "%s is distributed", table)
			require.Equal(t, "h", p.Method, table)
			require.NotNil(t, p.Column, table)
			require.Equal(t, "scope", *p.Column, "%s is distributed by scope", table)
			require.Equal(t, group, p.Group, "%s is co-located with episode", table)
			require.Equal(t, dbtest.ShardCount, p.Shards, table)
		}
		for _, table := range []string{"embedding_model", "api_key", "purge_tombstone", "inspector_session", "scope_policy", "webhook", "scope_index_drop"} {
			require.Equal(t, "n", got[table].Method, "%s is a reference table", table)
		}
		for _, table := range []string{"river_job", "river_leader", "river_queue", "river_migration"} {
			_, ok := got[table]
			require.False(t, ok, "River's %s stays local to the coordinator", table)
		}
		require.Len(t, got, 22, "every table of credo is in Citus's metadata")
	}
	check()

	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() {
			errs <- migrations.MigrateWithConfig(ctx, schema.Pool, &migrations.Config{ShardCount: 2 * dbtest.ShardCount})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	check() // and the shard count of distributed tables stays

	// The composite keys hold across the shards: a reference to another scope's row
	// is refused, within a scope it is kept.
	_, err := schema.Pool.Exec(ctx, `INSERT INTO episode (scope, messages, content_hash, occurred_at)
		VALUES ('user:1', '[]', 'a', now()), ('user:2', '[]', 'b', now())`)
	require.NoError(t, err)
	insert := `INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin, valid_from, recorded_at, last_seen_at, episode_id)
		SELECT 'user:1', 'user', 'home', 'attribute', 'User lives in Miami', 0.9, 'user_stated', now(), now(), now(), id
		FROM episode WHERE scope = $1`
	_, err = schema.Pool.Exec(ctx, insert, "user:2")
	// The shard's foreign_key_violation comes back through the coordinator as XX000.
	require.ErrorContains(t, err, `violates foreign key constraint "belief_episode_id_fkey`,
		"a belief cannot come from another scope's episode")
	_, err = schema.Pool.Exec(ctx, insert, "user:1")
	require.NoError(t, err)
}

// TestCitusMoveDatabase: the way docs/operations.md moves a single-node database to Citus.
// A dump restored on the coordinator holds plain tables (pg_dump knows nothing of shards);
// the next start's migrations distribute them, with every row, and ids go on after the
// largest one.
func TestCitusMoveDatabase(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	src := dbtest.New(t)
	for _, scope := range []string{"user:1", "user:2", "user:3"} {
		_, err := src.Pool.Exec(ctx, `WITH ep AS (
				INSERT INTO episode (scope, messages, content_hash, occurred_at) VALUES ($1, '[]', 'h', now()) RETURNING id
			), b AS (
				INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin, valid_from, recorded_at, last_seen_at, episode_id)
				SELECT $1, 'user', 'home', 'attribute', 'User lives in Miami', 0.9, 'user_stated', now(), now(), now(), id FROM ep RETURNING id
			), c AS (
				INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin, valid_from, recorded_at, last_seen_at)
				VALUES ($1, 'user', 'climate', 'attribute', 'User lives somewhere warm', 0.6, 'inferred', now(), now(), now()) RETURNING id
			)
			INSERT INTO belief_dependency (scope, belief_id, basis_id) SELECT $1, c.id, b.id FROM b, c`, scope)
		require.NoError(t, err)
		_, err = src.Pool.Exec(ctx, "INSERT INTO scope_consolidation (scope, watermark) VALUES ($1, now())", scope)
		require.NoError(t, err)
	}
	_, err := src.Pool.Exec(ctx, "INSERT INTO embedding_model (model, dim) VALUES ('m', 3)")
	require.NoError(t, err)

	// Dump the schema and restore it under another name.
	dst := src.Name + "_moved"
	t.Cleanup(func() {
		_, _ = src.Pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+dst+" CASCADE")
	})
	dump, err := exec.CommandContext(ctx, "pg_dump", "--dbname="+dbtest.URL(), "--schema="+src.Name).Output()
	require.NoError(t, err)
	restore := exec.CommandContext(ctx, "psql", "--dbname="+dbtest.URL(), "-v", "ON_ERROR_STOP=1", "-qX")
	restore.Stdin = bytes.NewReader(bytes.ReplaceAll(dump, []byte(src.Name), []byte(dst)))
	out, err := restore.CombinedOutput()
	require.NoError(t, err, "%s", out)

	cfg, err := pgxpool.ParseConfig(dbtest.URL())
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["search_path"] = dst + ",public"
	moved, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(moved.Close)
	require.Empty(t, placements(t, moved, dst), "a restored dump holds plain tables")

	require.NoError(t, migrations.MigrateWithConfig(ctx, moved, &migrations.Config{ShardCount: dbtest.ShardCount}))
	got := placements(t, moved, dst)
	require.Len(t, got, 22)
	require.Equal(t, "h", got["belief_dependency"].Method)
	require.Equal(t, got["episode"].Group, got["belief_dependency"].Group)
	require.Equal(t, "n", got["embedding_model"].Method)

	const snapshot = `SELECT (SELECT jsonb_agg(to_jsonb(e) ORDER BY id) FROM episode e)::text,
		(SELECT jsonb_agg(to_jsonb(b) ORDER BY id) FROM belief b)::text,
		(SELECT jsonb_agg(to_jsonb(d) ORDER BY belief_id) FROM belief_dependency d)::text,
		(SELECT jsonb_agg(to_jsonb(s) ORDER BY scope) FROM scope_consolidation s)::text,
		(SELECT jsonb_agg(to_jsonb(m)) FROM embedding_model m)::text`
	read := func(db dbtest.DB) []string {
		out := make([]string, 5)
		require.NoError(t, db.QueryRow(ctx, snapshot).Scan(&out[0], &out[1], &out[2], &out[3], &out[4]))
		return out
	}
	require.Equal(t, read(src.Pool), read(moved), "every row kept")

	var maxID, next int64
	require.NoError(t, moved.QueryRow(ctx, "SELECT max(id) FROM belief").Scan(&maxID))
	require.NoError(t, moved.QueryRow(ctx, `INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin,
			valid_from, recorded_at, last_seen_at)
		VALUES ('user:4', 'user', 'home', 'attribute', 'User lives in Oslo', 0.9, 'user_stated', now(), now(), now())
		RETURNING id`).Scan(&next))
	require.Greater(t, next, maxID, "ids go on after the restored ones")
}
