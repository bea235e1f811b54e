package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// TestApplyRefusesStaleSnapshot: a batch decided without seeing an active belief the
// scope gained since is refused whole; a belief retired since is not a reason to refuse
// (the directive is re-checked), nor is another scope's change.
func TestApplyRefusesStaleSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := NewStore(dbtest.New(t).Pool, nil)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	accept := func(scope, statement, attribute string, seen *Snapshot) (*Result, error) {
		return store.Apply(ctx, &Batch{Scope: scope, Origin: RevisionExtraction, At: at, Seen: seen,
			Facts: []Fact{{Statement: statement, Attribute: attribute, Confidence: 0.9, Origin: OriginUserStated}}})
	}

	empty, err := store.Snapshot(ctx, "user:1")
	require.NoError(t, err)
	require.Zero(t, empty.Latest)
	res, err := accept("user:1", "User lives in Lisbon", "location", empty)
	require.NoError(t, err, "nothing changed since the snapshot")
	lisbon := res.Facts[0].BeliefID

	_, err = accept("user:1", "User likes tea", "drink", empty)
	require.ErrorIs(t, err, ErrStale, "Lisbon was stored after the snapshot")
	all, err := store.All(ctx, "user:1")
	require.NoError(t, err)
	require.Len(t, all, 1, "a stale batch applies nothing")

	seen, err := store.Snapshot(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, lisbon, seen.Latest)
	_, err = accept("user:2", "User lives in Oslo", "location", nil)
	require.NoError(t, err)
	_, err = store.Apply(ctx, &Batch{Scope: "user:1", Origin: RevisionOperator, At: at, Candidates: []int64{lisbon},
		Facts: []Fact{{Resolves: &Directive{Index: 0, Action: ActionRetract, Reason: ReasonCorrection}, Confidence: 1, Origin: OriginUserStated}}})
	require.NoError(t, err)
	_, err = accept("user:1", "User likes tea", "drink", seen)
	require.NoError(t, err, "a retirement or another scope's belief does not make the batch stale")
}
