package app

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQuiet(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := Quiet(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	log.Info("elected leader")
	log.Error("periodic enqueuer: error", "err", context.Canceled)
	require.Empty(t, buf.String(), "routine lines and shutdown noise go to debug")
	log.Warn("job failed")
	log.Error("cannot connect", "err", errors.New("connection refused"))
	require.Contains(t, buf.String(), "level=WARN msg=\"job failed\"")
	require.Contains(t, buf.String(), "level=ERROR msg=\"cannot connect\"")

	buf.Reset()
	debug := Quiet(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	debug.Info("elected leader")
	require.Contains(t, buf.String(), "level=DEBUG msg=\"elected leader\"")
}
