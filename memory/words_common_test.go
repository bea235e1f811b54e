package memory

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

const commonDim = 16

// commonBundle is a scope whose beliefs all say "zebra", embedded with commonModel.
type commonBundle struct {
	store *Store
	rng   *rand.Rand
	scope string
}

const commonModel = "common-words"

func setupCommon(t *testing.T) *commonBundle {
	t.Helper()
	schema := dbtest.New(t)
	store := NewStore(schema.Pool, nil)
	require.NoError(t, store.EnsureEmbeddingModel(context.Background(), commonModel, commonDim))
	return &commonBundle{store: store, rng: rand.New(rand.NewPCG(3, 4)), scope: "user:zebra"}
}

// add stores n beliefs saying "zebra", the first superseded ones superseded.
func (b *commonBundle) add(t *testing.T, n, superseded int) []int64 {
	t.Helper()
	rows := make([]dbtest.Row, n)
	for i := range rows {
		rows[i] = dbtest.Row{Scope: b.scope, Statement: fmt.Sprintf("User saw a zebra on trip %d", b.rng.Int()),
			Attribute: "sighting", Vector: dbtest.Unit(b.rng, commonDim)}
		if i < superseded {
			rows[i].Status = "superseded"
		}
	}
	return dbtest.InsertBeliefs(t, b.store.db, commonModel, rows)
}

// common is the scope's counted common words, without their prefix; nil when it has no
// count.
func (b *commonBundle) common(t *testing.T) []string {
	t.Helper()
	var words []string
	err := b.store.db.QueryRow(context.Background(), "SELECT words FROM scope_common_words WHERE scope = $1", b.scope).Scan(&words)
	if err != nil {
		require.ErrorContains(t, err, "no rows")
		return nil
	}
	sum := md5.Sum([]byte(b.scope))
	prefix := hex.EncodeToString(sum[:])[:8]
	out := make([]string, len(words))
	for i, w := range words {
		require.Equal(t, prefix, w[:8], "stored as the words index stores it")
		out[i] = w[8:]
	}
	return out
}

func TestCountCommonWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCommon(t)

	ids := b.add(t, MaxTermBeliefs, 0)
	res, err := b.store.CountCommonWords(ctx, b.scope)
	require.NoError(t, err)
	require.Equal(t, CommonWordsResult{Beliefs: MaxTermBeliefs}, res, "a scope of MaxTermBeliefs beliefs has no common word")
	require.Nil(t, b.common(t))

	ids = append(ids, b.add(t, 6, 0)...) // 70
	res, err = b.store.CountCommonWords(ctx, b.scope)
	require.NoError(t, err)
	require.Equal(t, CommonWordsResult{Counted: true, Beliefs: 70, Words: 7}, res)
	// Every word but the trip's number: subject, attribute and statement.
	require.Equal(t, []string{"a", "on", "saw", "sighting", "trip", "user", "zebra"}, b.common(t))

	res, err = b.store.CountCommonWords(ctx, b.scope)
	require.NoError(t, err)
	require.False(t, res.Counted, "counted again only once the scope grew or shrank by a fifth")
	b.add(t, 13, 0) // 83: not a fifth more
	res, err = b.store.CountCommonWords(ctx, b.scope)
	require.NoError(t, err)
	require.False(t, res.Counted)
	b.add(t, 1, 0) // 84
	res, err = b.store.CountCommonWords(ctx, b.scope)
	require.NoError(t, err)
	require.Equal(t, CommonWordsResult{Counted: true, Beliefs: 84, Words: 7}, res)

	// A purge drops the count: no purged word stays in it, and the next pass counts again.
	_, err = b.store.Purge(ctx, Selection{Scope: b.scope, IDs: ids[:1]})
	require.NoError(t, err)
	require.Nil(t, b.common(t))
	res, err = b.store.CountCommonWords(ctx, b.scope)
	require.NoError(t, err)
	require.Equal(t, CommonWordsResult{Counted: true, Beliefs: 83, Words: 7}, res)

	// An erased scope gets no row.
	_, err = b.store.Purge(ctx, Selection{Scope: b.scope, All: true})
	require.NoError(t, err)
	res, err = b.store.CountCommonWords(ctx, b.scope)
	require.NoError(t, err)
	require.Equal(t, CommonWordsResult{}, res)
	require.Nil(t, b.common(t))
}

// A word more than MaxTermBeliefs beliefs of the scope hold, current or not, is left out
// of a text's terms once counted: its posting list is not read. Before the count, the
// read counts the current beliefs holding it, 5 here.
func TestCommonWordsAreLeftOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCommon(t)
	b.add(t, 70, 65)
	q := CandidatesQuery{Scope: b.scope, Text: "the zebra", Model: commonModel, Vector: dbtest.Unit(b.rng, commonDim), K: 5}

	scored := func() int {
		t.Helper()
		bs, err := b.store.Candidates(ctx, q)
		require.NoError(t, err)
		require.Len(t, bs, 5)
		n := 0
		for _, bl := range bs {
			require.NotNil(t, bl.Match)
			if bl.Match.WordsScore > 0 {
				n++
				require.Positive(t, bl.Match.WordsRank)
			}
		}
		return n
	}
	require.Equal(t, 5, scored(), "the 5 current beliefs holding zebra")

	res, err := b.store.CountCommonWords(ctx, b.scope)
	require.NoError(t, err)
	require.True(t, res.Counted)
	require.Contains(t, b.common(t), "zebra")
	require.Zero(t, scored(), "zebra is common: left to the vectors")
}
