package eval_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

// The retrieval measurement stores each turn as a belief of its speaker and finds each
// question's evidence turns among the first k of the agent's read, by vectors alone and
// fused, with no chat call. CREDO_LOCOMO_DATA names another LoCoMo file to run it on
// (locomo10.json for docs/evaluation.md's table), CREDO_LOCOMO_EMBED=blind the fake's
// embedding blind to codes; the table is logged.
func TestLocomoRetrieval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file := locomoMini
	if f := os.Getenv("CREDO_LOCOMO_DATA"); f != "" {
		file = f
	}
	f, err := os.Open(file)
	require.NoError(t, err)
	samples, err := eval.ParseLocomo(file, f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	var opts []llmtest.Option
	if os.Getenv("CREDO_LOCOMO_EMBED") == "blind" {
		opts = append(opts, llmtest.WithEmbedFunc(func(text string) []float32 { return llmtest.EmbedBlindToCodes(text, llmtest.DefaultDim) }))
	}
	srv := llmtest.NewServer(t, opts...)
	provider, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)

	res, err := eval.RunLocomoRetrieval(ctx, samples, eval.LocomoRetrievalConfig{DatabaseURL: dbtest.URL(), Embed: provider,
		EmbedModel: provider.EmbedModel()})
	require.NoError(t, err)
	require.Zero(t, srv.ChatCount(), "no model call")
	var b strings.Builder
	require.NoError(t, res.WriteTable(&b))
	t.Logf("%s\n%s", file, b.String())

	turns, questions := 0, 0
	for _, s := range samples {
		for _, sess := range s.Sessions {
			turns += len(sess.Turns)
		}
		questions += len(s.Questions)
	}
	require.Equal(t, turns, res.Beliefs, "a belief a turn")
	require.Equal(t, questions, res.Overall.Questions+res.Unanswerable)
	require.Equal(t, []int{5, 10, 24}, res.Ks)
	for _, c := range append(res.Categories, res.Overall) {
		for i := range res.Ks {
			require.InDelta(t, 0.5, c.Vectors[i], 0.5, c.Name)
			require.InDelta(t, 0.5, c.Fused[i], 0.5, c.Name)
			if i > 0 {
				require.GreaterOrEqual(t, c.Fused[i], c.Fused[i-1], "recall grows with k")
			}
		}
	}
	if file == locomoMini {
		// Every conversation of the mini file holds fewer than 24 turns: each question finds
		// all its evidence at k 24, however it is ranked.
		require.Equal(t, 1.0, res.Overall.Vectors[2])
		require.Equal(t, 1.0, res.Overall.Fused[2])
		require.Equal(t, fmt.Sprint(eval.LocomoCategories), fmt.Sprint(categoriesOf(res.Categories)))
	}
}

func categoriesOf(cs []eval.RetrievalScore) []int {
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = c.Category
	}
	return out
}
