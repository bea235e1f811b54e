package app

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// invalidCatalogName is PostgreSQL's SQLSTATE for a database that does not exist.
const invalidCatalogName = "3D000"

// connectError is err, a failure to connect to the database of pc, with what to do
// about the two a newcomer meets first: nothing listening at the address (start
// PostgreSQL), and a database that does not exist (create it).
func connectError(pc *pgxpool.Config, err error) error {
	cc := pc.ConnConfig
	addr := net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT): // ENOENT: no Unix socket
		return fmt.Errorf("connect to database: nothing listens at %s: start PostgreSQL (with Docker Compose: "+
			"docker compose up -d postgres), or set DATABASE_URL to where it runs: %w", addr, err)
	case errors.As(err, &pgErr) && pgErr.Code == invalidCatalogName:
		return fmt.Errorf("connect to database: database %q does not exist at %s: create it (createdb -h %s -p %d -U %s %s), "+
			"or set DATABASE_URL to one that exists: %w", cc.Database, addr, cc.Host, cc.Port, cc.User, cc.Database, err)
	}
	return fmt.Errorf("connect to database: %w", err)
}
