package retention

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	require.NotNil(t, Config{}.withDefaults().Logger)
	l := slog.New(slog.DiscardHandler)
	require.Same(t, l, Config{Logger: l}.withDefaults().Logger, "a logger given is kept")
}
