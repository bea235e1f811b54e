package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/internal/config"
)

// EnvAPIKey is the variable `beliefs mcp` reads its key from when --key is not given.
const EnvAPIKey = "CREDO_API_KEY" //nolint:gosec // G101: the variable's name, not a key

// mcpCommand is
//
//	beliefs mcp [--key KEY]
//
// an MCP server over standard input and output for desktop agents (Claude Desktop and
// the like), with the tools remember, recall, history and forget, acting for one API
// key: its scopes and rights. Standard output carries the protocol only; logs go to
// standard error.
func mcpCommand() command {
	return command{name: "mcp", usage: "serve the MCP tools over stdio, for one API key (desktop agents)", groups: config.GroupDB | config.GroupLLM,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			key := fs.String("key", "", "the API key the tools act for (default: env "+EnvAPIKey+")")
			return func(ctx context.Context, e *env) error {
				token := *key
				if token == "" {
					token = os.Getenv(EnvAPIKey)
				}
				if token == "" {
					return config.Usagef("--key or %s is required: the tools act for one API key (make one with beliefs keys create)", EnvAPIKey)
				}
				return serveMCP(ctx, e, token, &mcp.StdioTransport{})
			}
		}}
}

// serveMCP serves the tools over t until the client goes away or ctx ends.
func serveMCP(ctx context.Context, e *env, token string, t mcp.Transport) error {
	store, chat, embed, err := e.openModels(ctx)
	if err != nil {
		return err
	}
	pool, err := e.openPool(ctx)
	if err != nil {
		return err
	}
	logger := app.Logger(e.cfg, e.stderr)
	// An insert-only River client: remember enqueues extraction jobs for the worker.
	jobs, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: logger, Middleware: e.tracing.RiverMiddleware()})
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	srv, err := api.New(ctx, api.Config{Store: store, Pool: pool, Jobs: jobs, Embed: embed, Chat: chat, Logger: logger})
	if err != nil {
		return err
	}
	err = srv.ServeMCP(ctx, t, token)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
