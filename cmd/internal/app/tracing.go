package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/tracing"
)

// flushTimeout bounds the export of a process's last spans: an unreachable collector
// delays the end of a command or a worker's stop by no more.
const flushTimeout = 5 * time.Second

// StartTracing starts tracing as the OTEL_* variables of getenv say (off when they are
// unset); a bad value is bad configuration. Call StopTracing at the end.
func StartTracing(ctx context.Context, getenv func(string) string) (*tracing.Tracing, error) {
	tr, err := tracing.New(ctx, tracing.FromEnv(getenv))
	if err != nil {
		return nil, config.Usage(err)
	}
	return tr, nil
}

// StopTracing exports the spans not yet exported, within flushTimeout even when ctx is
// done (a stop's signal). A failure is logged: a command or a drain that did its work
// did not fail for its traces.
func StopTracing(ctx context.Context, tr *tracing.Tracing, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		logger.Warn("spans not exported", "error", err)
	}
}

// Traced runs a CLI command, do, under its root span, name, when the OTEL_* variables
// of getenv turn tracing on (its statements, jobs and model calls are then the span's
// children), and exports the spans before it returns.
func Traced(ctx context.Context, name string, getenv func(string) string, logger *slog.Logger,
	do func(ctx context.Context, tr *tracing.Tracing) error) error {
	tr, err := StartTracing(ctx, getenv)
	if err != nil {
		return err
	}
	defer StopTracing(ctx, tr, logger)
	ctx, span := tr.Root(ctx, name)
	err = do(ctx, tr)
	tracing.End(span, err)
	return err
}
