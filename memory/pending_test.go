package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnembeddedByModel: a row embedded with another model than the configured one waits
// for a vector of it, as a row stored without one does; the background's list across
// scopes takes only the former, and the counts per scope say what is left.
func TestUnembeddedByModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	require.NoError(t, store.EnsureEmbeddingModel(ctx, "old", 3))
	b := extraction("u", "2026-01-02", nil, withVec("User lives in Miami", []float32{1, 0, 0}))
	b.EmbedModel = "old"
	mustApply(t, store, b)
	mustApply(t, store, extraction("u", "2026-01-03", nil, fact("User plays the cello", "instrument", "")))
	b = extraction("v", "2026-01-02", nil, withVec("User speaks Danish", []float32{0, 1, 0}))
	b.EmbedModel = "old"
	mustApply(t, store, b)

	u, err := store.Unembedded(ctx, "u", "new", 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"User lives in Miami", "User plays the cello"}, texts(u))
	all, err := store.Reembeddable(ctx, "new", 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"User lives in Miami", "User speaks Danish"}, texts(all),
		"a row without a vector waits for its scope's next call")
	left, err := store.ReembedPending(ctx, "new", "")
	require.NoError(t, err)
	require.Equal(t, map[string]int{"u": 1, "v": 1}, left)

	require.NoError(t, store.EnsureEmbeddingModel(ctx, "new", 3))
	stored, err := store.SetEmbeddings(ctx, "new", all, [][]float32{{1, 0, 0}, {0, 1, 0}})
	require.NoError(t, err)
	require.Equal(t, 2, stored, "a vector of the old model is replaced")
	left, err = store.ReembedPending(ctx, "new", "")
	require.NoError(t, err)
	require.Empty(t, left)
	near, err := store.Nearest(ctx, "u", "new", []float32{1, 0, 0}, 1)
	require.NoError(t, err)
	require.Equal(t, "User lives in Miami", near[0].Statement)
	require.NotNil(t, near[0].Distance)
	require.Equal(t, "User plays the cello", near[1].Statement, "a belief without a vector follows, unranked")
	require.Nil(t, near[1].Distance)
}

func withVec(statement string, v []float32) Fact {
	f := fact(statement, "other", "")
	f.Embedding = v
	return f
}

func texts(us []Unembedded) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Text
	}
	return out
}
