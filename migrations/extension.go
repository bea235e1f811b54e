package migrations

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrExtension is returned when the vector extension is neither there nor creatable:
// nothing was migrated.
var ErrExtension = errors.New("the pgvector extension is missing")

// ensureVector makes sure the vector extension exists before any table is created, so a
// database that cannot have it is reported with what to do, not with a bare permission
// error after River's tables were made.
func ensureVector(ctx context.Context, conn *pgxpool.Conn) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')").Scan(&exists); err != nil {
		return fmt.Errorf("migrate: look for the vector extension: %w", err)
	}
	if exists {
		return nil
	}
	_, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector")
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pgErr) && pgErr.Code == "42501": // insufficient_privilege
		return fmt.Errorf("%w: this database user may not create it; as a superuser, run "+
			"`psql -d DATABASE -c 'CREATE EXTENSION vector'` once, then start again (%v)", ErrExtension, err)
	case errors.As(err, &pgErr) && pgErr.Code == "58P01": // undefined_file: not installed
		return fmt.Errorf("%w: pgvector is not installed on the PostgreSQL server; install it "+
			"(Debian: postgresql-17-pgvector; see the README), then start again (%v)", ErrExtension, err)
	}
	return fmt.Errorf("%w: %w", ErrExtension, err)
}
