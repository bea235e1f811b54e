package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
)

// The API keys of the HTTP API and MCP server:
//
//	beliefs keys create --name N --scopes tenant:a/,tenant:b/ --rights read,write [--json]
//	beliefs keys list [--json]
//	beliefs keys revoke --id ID
//
// create prints the key once, on standard output (the rest goes to standard error, so
// KEY=$(beliefs keys create ...) works); only a hash of its secret is stored.

func keysCreateCommand() command {
	return command{name: "keys create", usage: "make an API key for the HTTP API and MCP (printed once)", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			name := fs.String("name", "", "what the key is for, e.g. support-agent (required)")
			scopes := fs.String("scopes", "", "comma-separated scope prefixes the key may act on, e.g. tenant:a/,tenant:b/; * for every scope (required)")
			rights := fs.String("rights", "", "comma-separated rights: write (transcripts), read, operate (add, correct, forget), purge (required)")
			asJSON := fs.Bool("json", false, "print the key and its settings as JSON")
			return func(ctx context.Context, e *env) error {
				if strings.TrimSpace(*name) == "" || strings.TrimSpace(*scopes) == "" || strings.TrimSpace(*rights) == "" {
					return config.Usagef("--name, --scopes and --rights are required")
				}
				var rs []api.Right
				for r := range strings.SplitSeq(*rights, ",") {
					rs = append(rs, api.Right(r))
				}
				pool, err := e.openPool(ctx)
				if err != nil {
					return err
				}
				k, token, err := api.CreateKey(ctx, pool, *name, strings.Split(*scopes, ","), rs)
				if errors.Is(err, api.ErrKeySpec) {
					return config.Usage(err)
				}
				if err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, struct {
						api.Key
						Token string `json:"key"`
					}{*k, token})
				}
				fmt.Fprintf(e.stderr, "created key %d %q (prefix %s): scopes %s; rights %s\n", k.ID, k.Name, k.Prefix,
					strings.Join(k.Scopes, ", "), joinRights(k.Rights))
				fmt.Fprintln(e.stderr, "The key is shown this once; only a hash of it is kept. Send it as: Authorization: Bearer <key>")
				fmt.Fprintln(e.stdout, token)
				return nil
			}
		}}
}

func keysListCommand() command {
	return command{name: "keys list", usage: "list API keys (never their secrets)", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				pool, err := e.openPool(ctx)
				if err != nil {
					return err
				}
				keys, err := api.ListKeys(ctx, pool)
				if err != nil {
					return err
				}
				if *asJSON {
					if keys == nil {
						keys = []api.Key{}
					}
					return printJSON(e.stdout, keys)
				}
				tw := table(e.stdout, "ID", "NAME", "PREFIX", "SCOPES", "RIGHTS", "CREATED", "REVOKED")
				for _, k := range keys {
					revoked := "-"
					if k.RevokedAt != nil {
						revoked = k.RevokedAt.Format(time.DateTime)
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, clip(k.Name), k.Prefix, clip(strings.Join(k.Scopes, ",")),
						strings.ReplaceAll(joinRights(k.Rights), " ", ""), k.CreatedAt.Format(time.DateTime), revoked)
				}
				return tw.Flush()
			}
		}}
}

func keysRevokeCommand() command {
	return command{name: "keys revoke", usage: "revoke an API key at once", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "key id, as keys list shows it (required)")
			return func(ctx context.Context, e *env) error {
				if *id == "" {
					return config.Usagef("--id is required")
				}
				n, err := strconv.ParseInt(*id, 10, 64)
				if err != nil || n <= 0 {
					return config.Usagef("--id %q is not a key id", *id)
				}
				pool, err := e.openPool(ctx)
				if err != nil {
					return err
				}
				k, err := api.RevokeKey(ctx, pool, n)
				if errors.Is(err, api.ErrKeyNotFound) {
					return fmt.Errorf("key %d: %w", n, memory.ErrNotFound)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "revoked key %d %q (prefix %s) at %s\n", k.ID, k.Name, k.Prefix, k.RevokedAt.Format(time.RFC3339))
				active, err := api.HasActiveKey(ctx, pool)
				if err != nil {
					return err
				}
				if !active {
					fmt.Fprintln(e.stderr, "beliefs: that was the last active key: the API, MCP and inspector now refuse every request "+
						"until a key is created (the keyless mode never comes back once a key has existed)")
				}
				return nil
			}
		}}
}

// keysCommands are the subcommands of keys.
func keysCommands() []command {
	return []command{keysCreateCommand(), keysListCommand(), keysRevokeCommand()}
}

// joinSubcommand reads "keys create ARGS" as the command "keys create" with ARGS.
func joinSubcommand(cmds []command, args []string) []string {
	if len(args) < 2 {
		return args
	}
	for _, c := range cmds {
		if c.name == args[0]+" "+args[1] {
			return append([]string{c.name}, args[2:]...)
		}
	}
	return args
}

func joinRights(rs []api.Right) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}
