package config

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DatabaseURLForm is the form DATABASE_URL takes, shown when it is not a URL.
const DatabaseURLForm = "postgres://user@host:5432/db"

// ParseDatabaseURL is DATABASE_URL as pgx's pool configuration. One that pgx cannot
// parse is a UsageError (bad configuration) that shows the form it takes; pgx's message
// masks a password it recognises.
func ParseDatabaseURL(url string) (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, Usage(fmt.Errorf("DATABASE_URL: %w; expected a URL like %s (with :password after the user if it needs one, ?sslmode=disable for a server without TLS)",
			err, DatabaseURLForm))
	}
	return pc, nil
}
