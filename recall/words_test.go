package recall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/recall"
)

// A question naming a code gets the belief that holds it first, in context and in ask,
// where an embedding blind to codes ranks it among look-alikes; each belief says why it
// ranked (its match: vector, words, entity).
func TestCodeRanksFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, b := setup(t, llmtest.WithEmbedFunc(func(text string) []float32 { return llmtest.EmbedBlindToCodes(text, llmtest.DefaultDim) }))
	const target = "User's order KX-5521 is a standing desk"
	b.belief(t, "u", target, "order_5521", "2026-01-01", "2026-01-01")
	items := []string{"a lamp", "a kettle", "two chairs", "a rug", "a mirror"}
	for i := range 30 {
		b.belief(t, "u", fmt.Sprintf("User's order KX-%d is %s", 1000+i*37, items[i%len(items)]), fmt.Sprintf("order_%d", i), "2026-01-01", "2026-02-01")
	}
	const question = "What is the status of order KX-5521?"

	before, err := r.Context(ctx, recall.Query{Scope: "u", Query: question, K: 5, VectorsOnly: true})
	require.NoError(t, err)
	require.NotContains(t, statements(before.Beliefs), target, "the case needs an embedding that misses the order: vectors alone do")

	got, err := r.Context(ctx, recall.Query{Scope: "u", Query: question, K: 5})
	require.NoError(t, err)
	require.Equal(t, target, got.Beliefs[0].Statement)
	m := got.Beliefs[0].Match
	require.NotNil(t, m)
	require.Equal(t, 1, m.WordsRank, "first by its words")
	require.Positive(t, m.WordsScore)
	require.InDelta(t, m.Vector+m.Words+m.Entity, m.Fused, 1e-12)
	raw, err := json.Marshal(got.Beliefs[0])
	require.NoError(t, err)
	require.Contains(t, string(raw), `"match":{"vector":`, "the score's parts in the JSON")
	require.Contains(t, strings.SplitN(got.Text, "\n", 3)[1], "KX-5521", "the block's first line")

	b.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		i := strings.Index(req.Prompt, "] "+target)
		require.Positive(t, i, "the order's belief is shown")
		return llmtest.Reply{Content: fmt.Sprintf(`{"reasoning": "r", "answer": "A standing desk", "citations": [%s]}`, req.Prompt[i-1:i])}
	})
	ans, err := r.Ask(ctx, recall.Query{Scope: "u", Query: question, K: 5})
	require.NoError(t, err)
	require.Equal(t, target, ans.Beliefs[0].Statement)
	require.Equal(t, []int64{ans.Beliefs[0].ID}, ans.Citations)
}

// A question naming an entity ranks that entity's current beliefs by the entity too; the
// user, whom every belief is about, is not an entity a question names.
func TestEntityRanking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, b := setup(t)
	_, err := b.store.Apply(ctx, &memory.Batch{Scope: "u", Origin: memory.RevisionExtraction, At: day("2026-01-01"),
		Facts: []memory.Fact{
			{Statement: "Marc lives in Denver", Subject: "Marc", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated},
			{Statement: "Marc works as a nurse", Subject: "Marc", Attribute: "job", Confidence: 0.9, Origin: memory.OriginUserStated},
			{Statement: "User lives in Lisbon", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated},
		}})
	require.NoError(t, err)

	got, err := r.Context(ctx, recall.Query{Scope: "u", Query: "How is Marc doing?", K: 3})
	require.NoError(t, err)
	ranked := map[string]int{}
	for _, bl := range got.Beliefs {
		require.NotNil(t, bl.Match, bl.Statement)
		ranked[bl.Statement] = bl.Match.EntityRank
	}
	require.Positive(t, ranked["Marc lives in Denver"])
	require.Positive(t, ranked["Marc works as a nurse"])
	require.Zero(t, ranked["User lives in Lisbon"], "not Marc's")
}
