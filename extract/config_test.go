package extract

import (
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	got := Config{}.withDefaults()
	require.Equal(t, DefaultMaxCandidates, got.MaxCandidates)
	require.Equal(t, DefaultMalformedRetries, got.MalformedRetries)
	require.Equal(t, DefaultBatch, got.Batch)
	require.Equal(t, DefaultMaxAttempts, got.MaxAttempts)
	require.IsType(t, &river.DefaultClientRetryPolicy{}, got.RetryPolicy)
	require.NotNil(t, got.Logger)

	got = Config{MaxCandidates: -1, MalformedRetries: -1, Batch: -1, MaxAttempts: -1}.withDefaults()
	require.Equal(t, DefaultMaxCandidates, got.MaxCandidates, "a negative bound is the default")
	require.Zero(t, got.MalformedRetries, "negative: never ask again")
	require.Equal(t, DefaultBatch, got.Batch)
	require.Equal(t, DefaultMaxAttempts, got.MaxAttempts)

	got = Config{MaxCandidates: 5, MalformedRetries: 1, Batch: 2, MaxAttempts: 3}.withDefaults()
	require.Equal(t, []int{5, 1, 2, 3}, []int{got.MaxCandidates, got.MalformedRetries, got.Batch, got.MaxAttempts})
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	p, err := llm.NewOllama(llm.Config{ChatModel: "chat", EmbedModel: "embed"})
	require.NoError(t, err)
	valid := Config{Store: memory.NewStore(nil, nil), Chat: p, Embed: p, EmbedModel: "embed"}
	for name, tc := range map[string]struct {
		change func(*Config)
		ok     bool
	}{
		"complete":           {func(*Config) {}, true},
		"no store":           {func(c *Config) { c.Store = nil }, false},
		"no chat":            {func(c *Config) { c.Chat = nil }, false},
		"no embedder":        {func(c *Config) { c.Embed = nil }, false},
		"no embedding model": {func(c *Config) { c.EmbedModel = "" }, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := valid
			tc.change(&cfg)
			_, err := NewWorker(cfg)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrConfig)
		})
	}
}
