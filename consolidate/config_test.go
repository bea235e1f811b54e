package consolidate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	got := Config{}.withDefaults()
	require.Equal(t, DefaultThreshold, got.Threshold)
	require.Equal(t, DefaultMaxCluster, got.MaxCluster)
	require.Equal(t, DefaultMaxSeeds, got.MaxSeeds)
	require.Equal(t, DefaultMaxCalls, got.MaxCalls)
	require.Equal(t, DefaultMalformedRetries, got.MalformedRetries)
	require.Equal(t, DefaultSettle, got.Settle)
	require.NotNil(t, got.Logger)

	got = Config{Threshold: 0.9, MaxCluster: 3, MaxSeeds: -1, MaxCalls: -1, MalformedRetries: -1, Settle: -time.Second}.withDefaults()
	require.Equal(t, 0.9, got.Threshold)
	require.Equal(t, 3, got.MaxCluster)
	require.Equal(t, DefaultMaxSeeds, got.MaxSeeds, "a negative bound is the default")
	require.Equal(t, DefaultMaxCalls, got.MaxCalls)
	require.Zero(t, got.MalformedRetries, "negative: never ask again")
	require.Zero(t, got.Settle, "negative: no settling")
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	p, err := llm.NewOllama(llm.Config{ChatModel: "chat", EmbedModel: "embed"})
	require.NoError(t, err)
	valid := Config{Store: memory.NewStore(nil, nil), Chat: p, EmbedModel: "embed"}
	for name, tc := range map[string]struct {
		change func(*Config)
		ok     bool
	}{
		"complete":              {func(*Config) {}, true},
		"no store":              {func(c *Config) { c.Store = nil }, false},
		"no chat":               {func(c *Config) { c.Chat = nil }, false},
		"no embedding model":    {func(c *Config) { c.EmbedModel = "" }, false},
		"threshold above 1":     {func(c *Config) { c.Threshold = 1.5 }, false},
		"negative threshold":    {func(c *Config) { c.Threshold = -0.1 }, false},
		"threshold 1":           {func(c *Config) { c.Threshold = 1 }, true},
		"cluster of one":        {func(c *Config) { c.MaxCluster = 1 }, false},
		"negative cluster size": {func(c *Config) { c.MaxCluster = -2 }, false},
		"cluster of two":        {func(c *Config) { c.MaxCluster = 2 }, true},
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
