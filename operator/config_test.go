package operator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	require.NotNil(t, Config{}.withDefaults().Now, "time.Now")
	at := time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)
	got := Config{Now: func() time.Time { return at }}.withDefaults()
	require.Equal(t, at, got.Now(), "a clock given is kept")
}
