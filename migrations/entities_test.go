package migrations_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/migrations"
)

// TestEntitiesMigration: migration 021 resolves every existing belief's subject as
// entity.Key does, registers each entity once per scope with its key as an alias, on
// one node and on Citus (where belief is distributed when it runs), and goes down and
// up again.
func TestEntitiesMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	down := func() {
		t.Helper()
		if !dbtest.Citus(t) {
			require.NoError(t, migrations.MigrateDownTo(ctx, schema.Pool, 20))
			return
		}
		// Citus runs no multi-statement migration down: the same statements, one at a
		// time, every migration after 020 newest first (a later one left applied would
		// keep what an earlier one, run again, overwrites: the schema goes back to the
		// test pool), and the versions forgotten.
		files, err := filepath.Glob("migration/credo/*.down.sql")
		require.NoError(t, err)
		slices.Sort(files)
		slices.Reverse(files)
		for _, file := range files {
			if filepath.Base(file) <= "020" {
				break
			}
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			for stmt := range strings.SplitSeq(string(raw), ";\n") {
				if strings.TrimSpace(stmt) != "" {
					_, err := schema.Pool.Exec(ctx, stmt)
					require.NoError(t, err, stmt)
				}
			}
		}
		_, err = schema.Pool.Exec(ctx, "DELETE FROM river_migration WHERE line = 'credo' AND version > 20")
		require.NoError(t, err)
	}
	down()

	subjects := []string{"user", "User", " the user ", "I", "me", "user's sister", "User\u2019s Sister", "my sister",
		"the user's  sister.", "Sarah", "\"Sarah\"", "users' parents", "My", "the Acme Corp", "user's the boss",
		"Dr. Who", "sister's husband", "user's sister's husband"}
	for i, s := range subjects {
		for _, scope := range []string{"user:1", "user:2"} {
			_, err := schema.Pool.Exec(ctx, `INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin,
					valid_from, recorded_at, last_seen_at)
				VALUES ($1, $2, 'a', 'attribute', 'statement ' || $3::int, 0.9, 'user_stated', now(), now(), now())`, scope, s, i)
			require.NoError(t, err)
		}
	}
	require.NoError(t, migrations.Migrate(ctx, schema.Pool, nil))
	// Up again, every check is the newest: the schema goes back to the test pool.
	var checks string
	require.NoError(t, schema.Pool.QueryRow(ctx, `SELECT string_agg(pg_get_constraintdef(c.oid), ' ') FROM pg_constraint c
		WHERE c.connamespace = $1::regnamespace AND c.conname IN ('belief_conflict_cause_check', 'belief_status_check')`,
		schema.Name).Scan(&checks))
	require.Contains(t, checks, "second_opinion")
	require.Contains(t, checks, "held")

	rows, err := schema.Pool.Query(ctx, "SELECT subject, entity FROM belief WHERE scope = 'user:1' ORDER BY id")
	require.NoError(t, err)
	type resolved struct{ Subject, Entity string }
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[resolved])
	require.NoError(t, err)
	require.Len(t, got, len(subjects))
	want := map[string]bool{}
	for _, r := range got {
		require.Equal(t, entity.Key(r.Subject), r.Entity, "subject %q resolves as entity.Key does", r.Subject)
		want[r.Entity] = true
	}
	for _, scope := range []string{"user:1", "user:2"} {
		rows, err = schema.Pool.Query(ctx, `SELECT e.key FROM entity e
			JOIN entity_alias a ON a.scope = e.scope AND a.alias = e.key AND a.entity = e.key
			WHERE e.scope = $1 ORDER BY e.key`, scope)
		require.NoError(t, err)
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Len(t, keys, len(want), "one entity per key in %s, its key an alias of itself", scope)
		for _, k := range keys {
			require.True(t, want[k], k)
		}
	}
	var kind string
	require.NoError(t, schema.Pool.QueryRow(ctx, "SELECT kind FROM entity WHERE scope = 'user:1' AND key = 'user'").Scan(&kind))
	require.Equal(t, "user", kind)

	down()
	require.NoError(t, migrations.Migrate(ctx, schema.Pool, nil))
	pending, err := migrations.Pending(ctx, schema.Pool)
	require.NoError(t, err)
	require.Empty(t, pending)
}
