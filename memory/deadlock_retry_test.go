package memory

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// A purge that Postgres aborts to break a deadlock is run again, and completes. Here
// the other side takes table locks in the order of a first embedding model's index
// builds (belief, then revision_event), against the purge's rows (events, then beliefs).
func TestPurgeRetriesADeadlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	first := mustApply(t, store, extraction("u", "2026-01-01", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
	mustApply(t, store, extraction("u", "2026-02-01", []int64{first}, resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))

	// PostgreSQL breaks a deadlock from the side whose deadlock_timeout fires first once
	// the cycle exists, and checks each wait only once. The purge's check comes 8 s
	// after it starts waiting, long after the other side closes the cycle even on a
	// loaded machine; the other side's would come after 60 s. So the purge is the one
	// aborted, every time. (Setting deadlock_timeout needs a superuser, as the test
	// database's owner is in CI and in the compose file.)
	purgePool := poolWith(t, bundle.schema.URL, "8s")
	store = NewStore(purgePool, &Config{Now: bundle.clock.Now})
	other, err := poolWith(t, bundle.schema.URL, "60s").Begin(ctx)
	require.NoError(t, err)
	defer other.Rollback(ctx)
	_, err = other.Exec(ctx, "LOCK TABLE belief IN SHARE MODE")
	require.NoError(t, err)

	done := make(chan error, 1)
	var purged *Purged
	go func() {
		var err error
		purged, err = store.Purge(ctx, Selection{Scope: "u", All: true})
		done <- err
	}()
	// Once the purge waits for belief, holding revision_event, the other side asks for
	// revision_event: a deadlock, which the purge, waiting first, is chosen to break.
	require.Eventually(t, func() bool {
		var waiting bool
		err := bundle.schema.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
			WHERE relation = to_regclass($1) AND NOT granted)`, bundle.schema.Name+".belief").Scan(&waiting)
		return err == nil && waiting
	}, 10*time.Second, 10*time.Millisecond, "the purge waits for belief")
	_, err = other.Exec(ctx, "LOCK TABLE revision_event IN SHARE MODE")
	require.NoError(t, err, "the purge gave way")
	require.NoError(t, other.Commit(ctx))

	require.NoError(t, <-done, "the purge ran again")
	require.EqualValues(t, 2, purged.Counts["belief"])
	require.Empty(t, mentions(t, bundle, "Miami"))
}

// poolWith is a pool on the test schema whose sessions wait deadlockTimeout before they
// look for a deadlock.
func poolWith(t *testing.T, url, deadlockTimeout string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["deadlock_timeout"] = deadlockTimeout
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}
