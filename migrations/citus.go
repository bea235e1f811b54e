package migrations

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultShardCount is CITUS_SHARD_COUNT's default: the shards of each distributed table.
// 32 spreads a scope population over up to 32 nodes before a table must be split again.
const DefaultShardCount = 32

// distributed are the tables of a scope's data, distributed by scope and co-located with
// episode, in an order where each table's references are distributed before it.
var distributed = []string{"episode", "belief", "revision_event", "belief_conflict", "belief_dependency",
	"scope_consolidation", "consolidation_judgment", "scope_vector_index", "change_head", "change", "webhook_delivery",
	"entity", "entity_alias", "slot_synonym", "scope_common_words"}

// reference are the tables without a scope, copied to every node: small, read by every
// shard's queries or by the coordinator alone (scope_policy: a few rows per
// organisation, read by the prefixes of a scope). Tables a later migration adds are listed
// here or above; one that does not exist yet is passed over.
var reference = []string{"embedding_model", "api_key", "purge_tombstone", "inspector_session", "scope_policy", "webhook", "scope_index_drop"}

// distribute shards credo's tables when the database has the citus extension, and does
// nothing on plain PostgreSQL. River's tables stay local to the coordinator: its queue is
// one table the workers lock rows of, not per-scope data. Idempotent: a table already
// distributed is left as it is (its shard count too: see docs/operations.md to change it).
func distribute(ctx context.Context, conn *pgxpool.Conn, shards int, logger *slog.Logger) error {
	var citus bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')").Scan(&citus); err != nil {
		return fmt.Errorf("migrate: look for the citus extension: %w", err)
	}
	if !citus {
		return nil
	}
	for _, table := range reference {
		if err := distributeTable(ctx, conn, table, "SELECT create_reference_table($1::text::regclass)", logger); err != nil {
			return err
		}
	}
	var anchor string
	for i, table := range distributed {
		sql, args := "SELECT create_distributed_table($1::text::regclass, 'scope', colocate_with => $2)", []any{anchor}
		if i == 0 {
			// The first table sets the shard count of the co-location group.
			sql, args = "SELECT create_distributed_table($1::text::regclass, 'scope', shard_count => $2, colocate_with => 'none')", []any{shards}
		}
		name, err := qualified(ctx, conn, table)
		if err != nil {
			return err
		}
		if i == 0 {
			anchor = name
		}
		if err := distributeTable(ctx, conn, table, sql, logger, args...); err != nil {
			return err
		}
	}
	return nil
}

// qualified is table of the current schema as Citus's functions take it, schema-qualified.
func qualified(ctx context.Context, conn *pgxpool.Conn, table string) (string, error) {
	var name string
	err := conn.QueryRow(ctx, "SELECT format('%I.%I', current_schema(), $1::text)", table).Scan(&name)
	if err != nil {
		return "", fmt.Errorf("migrate: name table %s: %w", table, err)
	}
	return name, nil
}

// distributeTable runs sql with table (of the current schema, schema-qualified) and args,
// unless the table is missing (a later migration adds it) or already in Citus's metadata.
func distributeTable(ctx context.Context, conn *pgxpool.Conn, table, sql string, logger *slog.Logger, args ...any) error {
	name, err := qualified(ctx, conn, table)
	if err != nil {
		return err
	}
	var exists, done bool
	err = conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL,
			EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1))`, name).Scan(&exists, &done)
	if err != nil {
		return fmt.Errorf("migrate: look up table %s in Citus: %w", table, err)
	}
	if !exists || done {
		return nil
	}
	if _, err := conn.Exec(ctx, sql, append([]any{name}, args...)...); err != nil {
		return fmt.Errorf("migrate: distribute table %s: %w", table, err)
	}
	logger.InfoContext(ctx, "distributed table on Citus", "table", table)
	return nil
}

// SchemaLockKey is the advisory lock that keeps apart, on Citus, the DDL of whole
// schemas: one schema's creation and migration (which distributes its tables) and
// another's drop lock the coordinator's Citus catalogs in orders that deadlock under
// load. Throwaway schemas take it: the eval's, and the tests' (internal/dbtest).
const SchemaLockKey = 0x64627473 // "dbts"

// Querier is what LockSchemaDDL needs of a connection.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// LockSchemaDDL takes SchemaLockKey on conn's session when the database has the citus
// extension, and returns its unlock; on plain PostgreSQL, which runs such DDL side by
// side, it takes nothing.
func LockSchemaDDL(ctx context.Context, conn Querier) (unlock func(), err error) {
	var citus bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')").Scan(&citus); err != nil {
		return nil, fmt.Errorf("look for the citus extension: %w", err)
	}
	if !citus {
		return func() {}, nil
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", SchemaLockKey); err != nil {
		return nil, fmt.Errorf("take the schema DDL lock: %w", err)
	}
	return func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", SchemaLockKey)
	}, nil
}
