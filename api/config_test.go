package api

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	p, err := llm.NewOllama(llm.Config{ChatModel: "chat", EmbedModel: "embed"})
	require.NoError(t, err)
	got := Config{Embed: p}.withDefaults()
	require.Equal(t, "embed", got.EmbedModel, "the provider's model")
	require.NotNil(t, got.Logger)
	require.NotNil(t, got.Now)
	require.Equal(t, DefaultBodyReadTimeout, got.BodyReadTimeout)
	require.Equal(t, int64(DefaultMaxBodyBytes), got.MaxBodyBytes)
	require.Equal(t, DefaultMaxRecords, got.MaxRecords)
	require.Equal(t, rate.Limit(DefaultRateLimit), got.limit())
	require.Equal(t, DefaultRateBurst, got.RateBurst)

	got = Config{Embed: p, EmbedModel: "other", BodyReadTimeout: -time.Second, MaxBodyBytes: -1, MaxRecords: -1,
		RateLimit: -1, RateBurst: -1}.withDefaults()
	require.Equal(t, "other", got.EmbedModel)
	require.Equal(t, DefaultBodyReadTimeout, got.BodyReadTimeout, "negative is the default")
	require.Equal(t, int64(DefaultMaxBodyBytes), got.MaxBodyBytes)
	require.Equal(t, DefaultMaxRecords, got.MaxRecords)
	require.Equal(t, rate.Inf, got.limit(), "a negative rate is no limit")
	require.Equal(t, DefaultRateBurst, got.RateBurst)

	got = Config{BodyReadTimeout: time.Second, MaxBodyBytes: 10, MaxRecords: 2, RateLimit: 1.5, RateBurst: 3}.withDefaults()
	require.Equal(t, time.Second, got.BodyReadTimeout)
	require.Equal(t, int64(10), got.MaxBodyBytes)
	require.Equal(t, 2, got.MaxRecords)
	require.Equal(t, rate.Limit(1.5), got.limit())
	require.Equal(t, 3, got.RateBurst)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	store, pool := memory.NewStore(nil, nil), &pgxpool.Pool{}
	require.NoError(t, Config{Store: store, Pool: pool}.validate())
	require.ErrorIs(t, Config{Pool: pool}.validate(), ErrConfig)
	require.ErrorIs(t, Config{Store: store}.validate(), ErrConfig)
}
