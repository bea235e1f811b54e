package main

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/dbtest"
)

// TestDatabaseURLErrors: a DATABASE_URL that is not a URL is bad configuration (exit 2)
// and the message shows the form it takes; a server that does not listen, and a database
// that does not exist, say what to do (exit 1).
func TestDatabaseURLErrors(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: one the system just gave out and took back.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())

	missing, err := url.Parse(dbtest.URL())
	require.NoError(t, err)
	missing.Path = "/credo_no_such_database"

	for _, tc := range []struct {
		name, url string
		code      int
		stderr    []string
	}{
		{"not a URL", "localhost:5432/credo", config.ExitUsage, []string{"DATABASE_URL", "postgres://user@host:5432/db"}},
		{"bad port", "postgres://ana:s3cret@localhost:port/credo", config.ExitUsage, []string{"DATABASE_URL", "postgres://user@host:5432/db"}},
		{"nothing listens", "postgres://postgres@" + closed + "/credo?sslmode=disable&connect_timeout=5", config.ExitFailed,
			[]string{"nothing listens at " + closed, "start PostgreSQL"}},
		{"no such database", missing.String(), config.ExitFailed,
			[]string{`database "credo_no_such_database" does not exist`, "createdb -h " + missing.Hostname() + " -p " + missing.Port(), " credo_no_such_database"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			getenv := func(name string) string {
				if name == "DATABASE_URL" {
					return tc.url
				}
				return ""
			}
			code := exitCode(run(context.Background(), []string{"list", "--scope", "user:ana"}, getenv, &stdout, &stderr), &stderr)
			require.Equal(t, tc.code, code, stderr.String())
			for _, want := range tc.stderr {
				require.Contains(t, stderr.String(), want)
			}
			require.NotContains(t, stderr.String(), "s3cret", "a password is never shown")
			require.Empty(t, stdout.String())
		})
	}
}
