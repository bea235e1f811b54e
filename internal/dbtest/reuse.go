package dbtest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/migrations"
)

// On Citus a schema costs seconds: its migration distributes every per-scope table, and
// its drop removes their shards on every node, both under migrations.SchemaLockKey. A test's schema
// is then reused: when the test ends it is emptied (TRUNCATE, identities restarted) and
// put in a pool that every test process of the database shares, and New takes one from
// it before it creates one. Emptied, a schema is as a fresh one: same tables, indexes
// and migrations, no rows, ids from 1. One that a test changed (a migration down, an
// index or table of its own) is dropped instead. Plain PostgreSQL creates a schema in
// milliseconds and keeps a fresh one per test.

// poolTable lists the emptied schemas free for reuse, in the database's public schema.
const poolTable = "public.dbtest_schema_pool"

// poolLockKey serializes takers and givers of poolTable's rows (and its creation).
const poolLockKey = 0x64627470 // "dbtp"

// shape is what a reusable schema holds, compared when it is given back: a schema whose
// shape changed is dropped, not reused.
type shape struct {
	Tables, Indexes, Migrations int
}

func readShape(ctx context.Context, conn *pgx.Conn, schema string) (shape, error) {
	var s shape
	err := conn.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM pg_tables WHERE schemaname = $1),
			(SELECT count(*) FROM pg_indexes WHERE schemaname = $1),
			(SELECT count(*) FROM `+pgx.Identifier{schema, "river_migration"}.Sanitize()+`)`, schema).
		Scan(&s.Tables, &s.Indexes, &s.Migrations)
	return s, err
}

// poolKey is what a schema must match to be reused: the migrations that made it and
// the shard count of its tables.
func poolKey() (string, error) {
	fp, err := migrations.Fingerprint()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s/%d", fp, ShardCount), nil
}

// takeReusable takes an emptied schema of key from the pool, "" when there is none.
func takeReusable(ctx context.Context, conn *pgx.Conn, key string) (name string, sh shape, err error) {
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", poolLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+poolTable+` (name text PRIMARY KEY, key text NOT NULL,
				tables int NOT NULL, indexes int NOT NULL, migrations int NOT NULL)`); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, "DELETE FROM "+poolTable+` WHERE name = (SELECT name FROM `+poolTable+` WHERE key = $1 LIMIT 1)
			RETURNING name, tables, indexes, migrations`, key).Scan(&name, &sh.Tables, &sh.Indexes, &sh.Migrations)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return "", shape{}, fmt.Errorf("take a reusable schema: %w", err)
	}
	if name == "" {
		return "", shape{}, nil
	}
	// The schema may have been dropped since (a cluster reset by hand): then none.
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", name).Scan(&exists); err != nil || !exists {
		return "", shape{}, err
	}
	return name, sh, nil
}

// giveBack empties schema and puts it in the pool under key, when it still has shape
// want; otherwise it reports false and the caller drops it.
func giveBack(ctx context.Context, conn *pgx.Conn, schema, key string, want shape) (bool, error) {
	got, err := readShape(ctx, conn, schema)
	if err != nil || got != want {
		return false, err
	}
	rows, err := conn.Query(ctx, `SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
		WHERE schemaname = $1 AND tablename <> 'river_migration' ORDER BY tablename`, schema)
	if err != nil {
		return false, err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false, err
	}
	if _, err := conn.Exec(ctx, "TRUNCATE "+strings.Join(tables, ", ")+" RESTART IDENTITY CASCADE"); err != nil {
		return false, err
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", poolLockKey); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+poolTable+" (name, key, tables, indexes, migrations) VALUES ($1, $2, $3, $4, $5)",
			schema, key, want.Tables, want.Indexes, want.Migrations)
		return err
	})
	return err == nil, err
}
