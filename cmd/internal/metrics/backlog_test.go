package metrics

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

func TestBacklogGauges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	m := New()
	m.WatchBacklog(memory.NewStore(schema.Pool, nil))

	s := scrapeOf(t, m)
	require.Equal(t, 0.0, s.value("credo_episodes_pending"))
	require.Equal(t, 0.0, s.value("credo_episodes_oldest_pending_age_seconds"), "nothing waits")

	for i, ep := range []struct {
		scope, state string
		age          time.Duration
	}{{"user:1", "pending", time.Hour}, {"user:1", "pending", time.Minute}, {"user:2", "pending", 0}, {"user:2", "failed", 0}, {"user:3", "applied", 0}} {
		_, err := schema.Pool.Exec(ctx, `INSERT INTO episode (scope, messages, content_hash, occurred_at, received_at, state)
			VALUES ($1, '[]', $2, now(), now() - $3::interval, $4)`, ep.scope, strconv.Itoa(i), ep.age.String(), ep.state)
		require.NoError(t, err)
	}
	s = scrapeOf(t, m)
	require.Equal(t, 3.0, s.value("credo_episodes_pending"))
	require.Equal(t, 1.0, s.value("credo_episodes_failed"))
	require.Equal(t, 2.0, s.value("credo_scopes_pending"))
	require.InDelta(t, time.Hour.Seconds(), s.value("credo_episodes_oldest_pending_age_seconds"), 60, "the oldest waits an hour")
}

func TestReembedGauge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	store := memory.NewStore(schema.Pool, nil)
	m := New()
	m.WatchReembed(store, "new")
	require.Equal(t, 0.0, scrapeOf(t, m).value("credo_reembed_pending"))

	require.NoError(t, store.EnsureEmbeddingModel(ctx, "old", 2))
	for _, s := range []string{"User lives in Miami", "User plays the cello"} {
		_, err := store.Apply(ctx, &memory.Batch{Scope: "u", Origin: memory.RevisionExtraction, EmbedModel: "old",
			Facts: []memory.Fact{{Statement: s, Attribute: s, Confidence: 0.9, Origin: memory.OriginUserStated, Embedding: []float32{1, 0}}}})
		require.NoError(t, err)
	}
	require.Equal(t, 2.0, scrapeOf(t, m).value("credo_reembed_pending"), "two beliefs of the old model are left")
}
