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

	// Postgres looks for a deadlock once, deadlock_timeout after a session starts to wait,
	// and aborts the session that finds it. The purge's look comes seconds after it waits,
	// however slow the machine is to ask for the other lock; the other side's only after
	// a minute, a clear failure rather than a hang.
	cfg, err := pgxpool.ParseConfig(bundle.schema.URL)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["deadlock_timeout"] = "5s"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	store = NewStore(pool, nil)

	other, err := bundle.schema.Pool.Begin(ctx)
	require.NoError(t, err)
	defer other.Rollback(ctx)
	_, err = other.Exec(ctx, "SET LOCAL deadlock_timeout = '60s'")
	require.NoError(t, err)
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
