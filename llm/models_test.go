package llm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

func TestHasModel(t *testing.T) {
	t.Parallel()
	models := []string{"qwen2.5:7b", "nomic-embed-text:latest"}
	for model, want := range map[string]bool{
		"qwen2.5:7b": true, "nomic-embed-text": true, "nomic-embed-text:latest": true, "qwen2.5": false, "llama3": false,
	} {
		require.Equal(t, want, llm.HasModel(models, model), model)
	}
}

func TestModelsOverTheWire(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithModels("a", "b"))
	o, err := llm.NewOllama(srv.OllamaConfig())
	require.NoError(t, err)
	p, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	for _, l := range []llm.ModelLister{o, p} {
		got, err := l.Models(context.Background())
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"a", "b"}, got)
	}
}
