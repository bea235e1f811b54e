package llm_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
)

// usageModel answers every call with fixed usage, or fails when fail is set.
type usageModel struct{ fail bool }

func (m usageModel) Chat(context.Context, llm.ChatRequest) (llm.ChatResponse, error) {
	if m.fail {
		return llm.ChatResponse{}, errors.New("down")
	}
	return llm.ChatResponse{Content: "{}", Usage: llm.Usage{PromptTokens: 30, CompletionTokens: 7}}, nil
}

func (m usageModel) Embed(_ context.Context, in []string) (llm.EmbedResponse, error) {
	if m.fail {
		return llm.EmbedResponse{}, errors.New("down")
	}
	return llm.EmbedResponse{Vectors: make([][]float32, len(in)), Usage: llm.Usage{PromptTokens: 5 * len(in)}}, nil
}

func TestMeterCountsTotalsAndTallies(t *testing.T) {
	t.Parallel()
	m := llm.NewMeter(usageModel{}, usageModel{})
	var a, b llm.Tally
	ctxA, ctxB := llm.CountInto(context.Background(), &a), llm.CountInto(context.Background(), &b)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := m.Chat(ctxA, llm.ChatRequest{})
			require.NoError(t, err)
			_, err = m.Embed(ctxB, []string{"x", "y"})
			require.NoError(t, err)
			_, err = m.Embed(context.Background(), []string{"z"})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	require.Equal(t, llm.Counts{ChatCalls: 10, ChatPromptTokens: 300, ChatCompletionTokens: 70}, a.Counts())
	require.Equal(t, llm.Counts{EmbedCalls: 10, EmbedInputs: 20, EmbedTokens: 100}, b.Counts())
	total := m.Total()
	require.Equal(t, llm.Counts{ChatCalls: 10, ChatPromptTokens: 300, ChatCompletionTokens: 70,
		EmbedCalls: 20, EmbedInputs: 30, EmbedTokens: 150}, total)
	require.Equal(t, llm.Counts{EmbedCalls: 10, EmbedInputs: 10, EmbedTokens: 50}, total.Sub(a.Counts()).Sub(b.Counts()))
	require.Equal(t, total, a.Counts().Add(b.Counts()).Add(total.Sub(a.Counts()).Sub(b.Counts())))
}

func TestMeterSkipsFailedCalls(t *testing.T) {
	t.Parallel()
	m := llm.NewMeter(usageModel{fail: true}, usageModel{fail: true})
	var tally llm.Tally
	ctx := llm.CountInto(context.Background(), &tally)
	_, err := m.Chat(ctx, llm.ChatRequest{})
	require.Error(t, err)
	_, err = m.Embed(ctx, []string{"x"})
	require.Error(t, err)
	require.Zero(t, m.Total())
	require.Zero(t, tally.Counts())
}
