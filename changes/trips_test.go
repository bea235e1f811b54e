package changes_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

// Announcing an extraction's new beliefs costs the same two round trips (the head,
// then one batch of every change) however many beliefs it stores: the extraction
// worker pays it once per episode, inside the scope's lock.
func TestAnnouncingBeliefsCostsTwoTripsPerBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSetup(t)
	quiet := memory.NewStore(s.schema.Pool, nil)
	n := 0
	trips := func(store *memory.Store, facts int) int {
		t.Helper()
		b := &memory.Batch{Scope: fmt.Sprint("user:", n), Origin: memory.RevisionExtraction, At: date("2026-01-15")}
		n++
		for i := range facts {
			b.Facts = append(b.Facts, memory.Fact{Statement: fmt.Sprint("User owns boat ", i), Attribute: fmt.Sprint("boat_", i),
				Confidence: 0.9, Origin: memory.OriginUserStated})
		}
		var counted *dbtest.TripTx
		err := pgx.BeginFunc(ctx, s.schema.Pool, func(tx pgx.Tx) error {
			counted = &dbtest.TripTx{Tx: tx}
			_, err := store.ApplyTx(ctx, counted, b)
			return err
		})
		require.NoError(t, err)
		return counted.Trips
	}
	for _, facts := range []int{1, 5} {
		require.Equal(t, trips(quiet, facts)+2, trips(s.store, facts), "%d new beliefs", facts)
	}
	got, _ := s.readAll(t, changes.Query{Prefixes: []string{""}})
	require.Len(t, got, 6, "each belief announced")
}
