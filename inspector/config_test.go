package inspector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	p, err := llm.NewOllama(llm.Config{ChatModel: "chat", EmbedModel: "embed"})
	require.NoError(t, err)
	got := Config{Embed: p}.withDefaults()
	require.Equal(t, "embed", got.EmbedModel, "the provider's model")
	require.Equal(t, api.DefaultSessionTTL, got.SessionTTL)
	require.NotNil(t, got.Logger)
	require.NotNil(t, got.Now)

	got = Config{Embed: p, EmbedModel: "other", SessionTTL: time.Minute}.withDefaults()
	require.Equal(t, "other", got.EmbedModel)
	require.Equal(t, time.Minute, got.SessionTTL)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	store := memory.NewStore(nil, nil)
	require.NoError(t, Config{Store: store, Gate: &api.Server{}}.validate())
	require.ErrorIs(t, Config{Gate: &api.Server{}}.validate(), ErrConfig)
	require.ErrorIs(t, Config{Store: store}.validate(), ErrConfig)
}
