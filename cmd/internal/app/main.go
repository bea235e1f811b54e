package app

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/credohq/credo/internal/config"
)

// Main is a command's main: run gets a context that SIGINT and SIGTERM cancel, and the
// process exits with config.ExitCode's code for the error run returns.
func Main(name string, run func(ctx context.Context) error, notFound ...error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx)
	stop()
	os.Exit(config.ExitCode(name, err, os.Stderr, notFound...))
}
