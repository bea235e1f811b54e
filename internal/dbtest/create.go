package dbtest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/credohq/credo/migrations"
)

// Create makes a fresh migrated schema where no testing.TB is at hand, as in runnable
// examples; drop closes the pool and removes the schema. Tests use New.
func Create(ctx context.Context) (s *Schema, drop func(), err error) {
	name := "example_" + randomHex(6)
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		return nil, nil, fmt.Errorf("connect to the test database (%s=%s): %w", EnvURL, URL(), err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		return nil, nil, fmt.Errorf("create schema: %w", err)
	}

	var pool *pgxpool.Pool
	drop = func() {
		if pool != nil {
			pool.Close()
		}
		// The caller's context may be done by now; dropping must not depend on it.
		ctx := context.WithoutCancel(ctx)
		conn, err := pgx.Connect(ctx, URL())
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE")
	}
	cfg, err := pgxpool.ParseConfig(URL())
	if err != nil {
		drop()
		return nil, nil, err
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = name + ",public"
	cfg.MaxConns = 4
	if pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		drop()
		return nil, nil, err
	}
	if err := migrations.MigrateWithConfig(ctx, pool, &migrations.Config{ShardCount: ShardCount}); err != nil {
		drop()
		return nil, nil, fmt.Errorf("migrate schema %s: %w", name, err)
	}
	return &Schema{Name: name, URL: withSearchPath(URL(), name), Pool: pool}, drop, nil
}
