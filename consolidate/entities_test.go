package consolidate

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// A pass proposes the entities that may be one, by name alone and with no model call,
// once; nothing merges until an operator applies the item.
func TestRunScopeProposesEntityMerges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)
	sarah := fact("Sarah likes tea", "drink", "2026-01-10")
	sarah.Subject = "Sarah"
	full := fact("Sarah Connor runs a gym", "job", "2026-01-11")
	full.Subject = "Sarah Connor"
	bundle.add(t, "user:1", memory.RevisionExtraction, sarah, full)

	rep, err := w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.MergesProposed)
	require.Zero(t, bundle.llm.ChatCount(), "names are compared without a model")
	items, err := bundle.store.Conflicts(ctx, "user:1", false)
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.Equal(t, memory.CauseSameEntity, *items[0].Cause)
	require.Equal(t, memory.RevisionConsolidation, items[0].Origin)
	require.Equal(t, &memory.MergeProposal{Into: "sarah connor", Other: "sarah"}, items[0].Proposed.Merge)
	es, err := bundle.store.Entities(ctx, "user:1")
	require.NoError(t, err)
	require.Len(t, es, 2, "nothing merged by itself")

	rep, err = w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Zero(t, rep.MergesProposed, "proposed once")
}
