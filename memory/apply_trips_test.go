package memory

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// tripConn counts the round trips made through a Conn: one per statement sent alone,
// one per batch.
type tripConn struct {
	Conn
	trips int
}

func (c *tripConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c.trips++
	return c.Conn.Exec(ctx, sql, args...)
}

func (c *tripConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c.trips++
	return c.Conn.Query(ctx, sql, args...)
}

func (c *tripConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c.trips++
	return c.Conn.QueryRow(ctx, sql, args...)
}

func (c *tripConn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	c.trips++
	return c.Conn.SendBatch(ctx, b)
}

// BeginTx counts a transaction as one trip, whatever it sends.
func (c *tripConn) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	c.trips++
	return c.Conn.BeginTx(ctx, opts)
}

// TestApplyRoundTrips pins the round trips of the writers' common batches, as the
// extraction worker sends them (an episode, a snapshot, vectors): each is about a
// millisecond of a worker's time under load, inside the scope's lock. Before the reads
// ahead and the queued writes they were 3, 6, 5 and 5.
func TestApplyRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, bundle := setup(t)
	const model = "m"
	require.NoError(t, s.EnsureEmbeddingModel(ctx, model, 3))
	vec := []float32{1, 0, 0}
	episodes := 0

	// trips applies one fact, as the extraction of an episode of scope would, over the
	// scope's beliefs, and counts ApplyTx's round trips.
	trips := func(t *testing.T, scope string, f Fact, candidates ...int64) (Outcome, int) {
		t.Helper()
		episodes++
		ep := insertEpisode(t, bundle, scope, fmt.Sprint("episode ", episodes), "2026-05-01")
		seen, err := s.Snapshot(ctx, scope)
		require.NoError(t, err)
		f.Embedding, f.EventEmbedding = vec, vec
		b := &Batch{Scope: scope, Origin: RevisionExtraction, EpisodeID: &ep, At: day("2026-05-01"),
			Candidates: candidates, Facts: []Fact{f}, EmbedModel: model, Seen: seen}
		var (
			res *Result
			n   int
		)
		err = pgx.BeginFunc(ctx, bundle.schema.Pool, func(tx pgx.Tx) error {
			counted := &dbtest.TripTx{Tx: tx}
			var err error
			res, err = s.ApplyTx(ctx, counted, b)
			n = counted.Trips
			return err
		})
		require.NoError(t, err)
		return res.Facts[0], n
	}

	old, n := trips(t, "u1", fact("User lives in Paris", "location", "2026-01-01"))
	require.Equal(t, OutcomeAccepted, old.Kind)
	require.Equal(t, 2, n, "a new belief: the lock with every read, then its insert")

	o, n := trips(t, "u1", resolves(fact("User lives in Rome", "location", "2026-05-01"), 0, ActionSupersede, ReasonTemporal), old.BeliefID)
	require.Equal(t, OutcomeSuperseded, o.Kind)
	require.Equal(t, 3, n, "a supersession: the lock with every read, the insert, then the rest in one batch")

	o, n = trips(t, "u1", fact("User lives in Rome", "location", "2026-05-01"))
	require.Equal(t, OutcomeDuplicate, o.Kind)
	require.Equal(t, 4, n, "a duplicate of the same day: the lock with every read, the order of the two episodes, the reinforcement, its event")

	o, n = trips(t, "u1", resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonTemporal), o.TargetID)
	require.Equal(t, OutcomeRetracted, o.Kind)
	require.Equal(t, 2, n, "a retraction: the lock with every read, then the rest in one batch")
}
