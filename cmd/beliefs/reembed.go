package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/reembed"
)

// reembedCommand is
//
//	beliefs reembed [--scope S] [--json]
//
// It gives every belief and revision event (of one scope, or of all) a vector of the
// configured EMBED_MODEL now, as the worker does in the background after the model
// changed. Running it again finds nothing to do.
func reembedCommand() command {
	return command{name: "reembed", usage: "embed again, with EMBED_MODEL, what another model embedded (the worker does it in the background)",
		groups: config.GroupDB | config.GroupLLM,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "only this scope (default: every scope)")
			asJSON := fs.Bool("json", false, "print what was done as JSON")
			return func(ctx context.Context, e *env) error {
				if *scope != "" {
					if err := requireScope(*scope); err != nil {
						return err
					}
				}
				store, _, embed, err := e.openModels(ctx)
				if err != nil {
					return err
				}
				r, err := reembed.New(reembed.Config{Store: store, Embed: embed, Model: embed.EmbedModel(), Logger: app.Logger(e.cfg, e.stderr)})
				if err != nil {
					return err
				}
				rep, err := r.Run(ctx, *scope, time.Time{})
				if err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, rep)
				}
				what := "every scope"
				if *scope != "" {
					what = *scope
				}
				switch {
				case rep.Rows == 0 && !rep.More:
					fmt.Fprintf(e.stdout, "nothing to re-embed in %s: every belief and revision event has a vector of %s\n", what, rep.Model)
				default:
					fmt.Fprintf(e.stdout, "re-embedded %d %s of %s with %s in %d embedding %s\n", rep.Rows, plural(rep.Rows, "row"),
						what, rep.Model, rep.Calls, plural(rep.Calls, "call"))
					if rep.More {
						fmt.Fprintln(e.stdout, "some rows were being written meanwhile: run it again to finish them")
					}
				}
				return nil
			}
		}}
}
