package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DatabaseURLForm is the form DATABASE_URL takes, shown when it is not a URL.
const DatabaseURLForm = "postgres://user@host:5432/db"

// urlScheme finds the scheme of a URL (RFC 3986).
var urlScheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// ParseDatabaseURL is DATABASE_URL as pgx's pool configuration. One that pgx cannot
// parse is a UsageError (bad configuration) that shows the form it takes; pgx's message
// masks a password it recognises. A URL of another database is said to be one, in words
// of its scheme alone: pgx would read it as keyword/value text and mask a password
// that was never there (mysql://root@db as mysql:xxxxxx@db).
func ParseDatabaseURL(url string) (*pgxpool.Config, error) {
	if m := urlScheme.FindStringSubmatch(strings.TrimSpace(url)); m != nil {
		if scheme := strings.ToLower(m[1]); scheme != "postgres" && scheme != "postgresql" {
			return nil, Usage(fmt.Errorf("DATABASE_URL: the scheme %q is not PostgreSQL's: credo runs on PostgreSQL (with pgvector); expected a URL like %s",
				m[1], DatabaseURLForm))
		}
	}
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, Usage(fmt.Errorf("DATABASE_URL: %w; expected a URL like %s (with :password after the user if it needs one, ?sslmode=disable for a server without TLS)",
			err, DatabaseURLForm))
	}
	return pc, nil
}
