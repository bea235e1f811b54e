package migrations

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivermigrate"
)

// MigrateDownTo takes credo's line down to version, for tests of a migration on a
// database the previous version filled.
func MigrateDownTo(ctx context.Context, pool *pgxpool.Pool, version int) error {
	m, err := migrator(pool, Line, nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{TargetVersion: version})
	return err
}
