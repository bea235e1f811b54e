// Package migrations holds credo's SQL schema and applies it together with River's.
//
// credo's migrations are a River migration line of their own ("credo"), so rivermigrate
// versions them in the same river_migration table as River's own: no second version
// table, and River's tooling sees them. This is the pattern River uses for its own
// additional lines.
package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/credohq/credo/internal/pgretry"
)

// Line is the name of credo's migration line in river_migration.
const Line = "credo"

//go:embed migration/credo/*.sql
var migrationFS embed.FS

// driver adds credo's migration line to River's pgx driver. It is only used to migrate.
type driver struct {
	*riverpgxv5.Driver
}

func (d *driver) GetMigrationLines() []string {
	return append(d.Driver.GetMigrationLines(), Line)
}

func (d *driver) GetMigrationDefaultLines() []string { return d.GetMigrationLines() }

func (d *driver) GetMigrationFS(line string) fs.FS {
	if line == Line {
		return migrationFS
	}
	return d.Driver.GetMigrationFS(line)
}

func (d *driver) GetMigrationTruncateTables(line string, version int) []string {
	if line == Line {
		return []string{"scope_common_words", "scope_index_drop", "slot_synonym", "entity_alias", "entity", "inspector_session", "scope_vector_index", "api_key", "purge_tombstone", "consolidation_judgment", "scope_consolidation", "belief_dependency", "belief_conflict", "revision_event", "belief", "episode", "embedding_model"}
	}
	return d.Driver.GetMigrationTruncateTables(line, version)
}

// lines in the order they must be applied: credo's tables do not depend on River's, but
// River's must exist before a worker starts.
func lines() []string { return []string{"main", Line} }

// lockKey serializes migrations between processes that start at the same time.
const lockKey = 0x63726564 // "cred"

// Config is how MigrateWithConfig migrates.
type Config struct {
	// Logger logs what was applied; nil logs nothing.
	Logger *slog.Logger
	// ShardCount is the number of shards of each table distributed on Citus
	// (CITUS_SHARD_COUNT), used when a table is first distributed; 0 means
	// DefaultShardCount. Plain PostgreSQL ignores it.
	ShardCount int
}

func (c *Config) withDefaults() *Config {
	out := *c
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.ShardCount == 0 {
		out.ShardCount = DefaultShardCount
	}
	return &out
}

func (c *Config) validate() error {
	// Citus's own bounds of shard_count.
	if c.ShardCount < 1 || c.ShardCount > 64000 {
		return fmt.Errorf("migrate: shard count %d is not between 1 and 64000", c.ShardCount)
	}
	return nil
}

// Migrate applies every pending migration, River's then credo's, with the default
// configuration. Concurrent callers wait for each other on an advisory lock, so several
// workers can start together.
func Migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	return MigrateWithConfig(ctx, pool, &Config{Logger: logger})
}

// MigrateWithConfig applies every pending migration, River's then credo's, then, when
// the database has the citus extension, distributes credo's tables (see distribute).
// Concurrent callers wait for each other on an advisory lock.
func MigrateWithConfig(ctx context.Context, pool *pgxpool.Pool, cfg *Config) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	logger := cfg.Logger
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return fmt.Errorf("migrate: take lock: %w", err)
	}
	defer func() {
		// Unlock even if ctx was canceled, or the lock stays with the pooled connection.
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockKey)
	}()
	if err := ensureVector(ctx, conn); err != nil {
		return err
	}

	for _, line := range lines() {
		m, err := migrator(pool, line, logger)
		if err != nil {
			return err
		}
		// The advisory lock keeps migrations apart, not other sessions' DDL: on Citus, a
		// version's DDL can deadlock with another schema's DROP or the maintenance
		// daemon's shard cleanup. Each version is its own transaction, so running the line
		// again starts at the version that was rolled back.
		var res *rivermigrate.MigrateResult
		err = pgretry.OnDeadlock(ctx, func() error {
			res, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s line: %w", line, err)
		}
		for _, v := range res.Versions {
			logger.InfoContext(ctx, "applied migration", "line", line, "version", v.Version, "name", v.Name)
		}
	}
	return distribute(ctx, conn, cfg.ShardCount, logger)
}

// Pending lists the migrations not yet applied, as "line/version" strings; empty means
// the schema is current.
func Pending(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	var pending []string
	for _, line := range lines() {
		m, err := migrator(pool, line, nil)
		if err != nil {
			return nil, err
		}
		res, err := m.Validate(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("validate %s line: %w", line, err)
		}
		if !res.OK {
			pending = append(pending, res.Messages...)
		}
	}
	return pending, nil
}

func migrator(pool *pgxpool.Pool, line string, logger *slog.Logger) (*rivermigrate.Migrator[pgx.Tx], error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &driver{riverpgxv5.New(pool)}
	if !slices.Contains(d.GetMigrationLines(), line) {
		return nil, fmt.Errorf("migrate: unknown line %q", line)
	}
	// River logs every step at info; credo logs what it applied itself.
	quiet := slog.New(&levelHandler{Handler: logger.Handler(), min: slog.LevelWarn})
	m, err := rivermigrate.New[pgx.Tx](d, &rivermigrate.Config{Line: line, Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("migrate: %s line: %w", line, err)
	}
	return m, nil
}

// levelHandler drops records under min.
type levelHandler struct {
	slog.Handler
	min slog.Level
}

func (h *levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// Fingerprint identifies the schema these migrations make: a hash of every migration of
// every line (River's and credo's). Two builds with the same fingerprint migrate a
// schema to the same tables; test harnesses that reuse migrated schemas compare it.
func Fingerprint() (string, error) {
	d := &driver{riverpgxv5.New(nil)}
	h := sha256.New()
	for _, line := range lines() {
		fsys := d.GetMigrationFS(line)
		err := fs.WalkDir(fsys, ".", func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%s\x00%d\x00", line, path, len(b))
			h.Write(b)
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("migrations fingerprint: %s line: %w", line, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
