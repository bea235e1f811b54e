package metrics

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

func TestRevisionsRevertedTotal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memory.NewStore(dbtest.New(t).Pool, nil)
	m := New()
	m.WatchReverts(store)
	s := scrapeOf(t, m)
	require.Contains(t, s, "credo_revisions_reverted_total", "reported before any revert")
	require.Equal(t, 0.0, s.value("credo_revisions_reverted_total", "origin=extraction"))

	f := memory.Fact{Statement: "User lives in New York City", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated}
	res, err := store.Apply(ctx, &memory.Batch{Scope: "u", Origin: memory.RevisionExtraction, Facts: []memory.Fact{f}})
	require.NoError(t, err)
	f.Statement, f.Resolves = "User lives in Miami", &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = store.Apply(ctx, &memory.Batch{Scope: "u", Origin: memory.RevisionExtraction, Candidates: []int64{res.Facts[0].BeliefID}, Facts: []memory.Fact{f}})
	require.NoError(t, err)
	_, err = store.Revert(ctx, memory.RevertParams{EventID: res.Facts[0].EventID})
	require.NoError(t, err)

	s = scrapeOf(t, m)
	require.Equal(t, 1.0, s.value("credo_revisions_reverted_total", "origin=extraction"))
	require.Equal(t, 0.0, s.value("credo_revisions_reverted_total", "origin=operator"), "the revert itself is not a reverted revision")
}
