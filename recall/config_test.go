package recall

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	p, err := llm.NewOllama(llm.Config{ChatModel: "chat", EmbedModel: "embed"})
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		in      Config
		retries int
		model   string
	}{
		"zero":                       {Config{}, DefaultMalformedRetries, ""},
		"the provider names a model": {Config{Embed: p}, DefaultMalformedRetries, "embed"},
		"a model named":              {Config{Embed: p, EmbedModel: "other"}, DefaultMalformedRetries, "other"},
		"retries set":                {Config{MalformedRetries: 5}, 5, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := tc.in.withDefaults()
			require.Equal(t, tc.retries, got.MalformedRetries)
			require.Equal(t, tc.model, got.EmbedModel)
			require.NotNil(t, got.Now)
			require.NotNil(t, got.Logger)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	_, err := New(Config{})
	require.ErrorIs(t, err, ErrConfig)
	_, err = New(Config{Store: memory.NewStore(nil, nil)})
	require.NoError(t, err, "Chat and Embed are optional")
}
