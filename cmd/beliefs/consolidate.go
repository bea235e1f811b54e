package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/consolidate"
	"github.com/credohq/credo/internal/config"
)

// consolidateCommand is
//
//	beliefs consolidate --scope S [--json]
//
// It runs the consolidation pass of the worker's periodic job now, in this process, so
// that an operator need not wait for the next sweep or run a worker at all.
func consolidateCommand() command {
	return command{name: "consolidate", usage: "resolve duplicate and conflicting beliefs of a scope now",
		groups: config.GroupDB | config.GroupLLM | config.GroupConsolidate,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope to consolidate (required)")
			asJSON := fs.Bool("json", false, "print the report as JSON")
			return func(ctx context.Context, e *env) error {
				if err := requireScope(*scope); err != nil {
					return err
				}
				store, chat, embed, err := e.openModels(ctx)
				if err != nil {
					return err
				}
				w, err := consolidate.NewWorker(consolidate.Config{
					Store: store, Chat: chat, Embed: embed, EmbedModel: embed.EmbedModel(),
					Threshold: e.cfg.ConsolidateThreshold, MaxCluster: e.cfg.ConsolidateMaxCluster,
					Logger: app.Logger(e.cfg, e.stderr),
				})
				if err != nil {
					return err
				}
				rep, err := w.RunScope(ctx, strings.TrimSpace(*scope))
				if err != nil {
					// What the passes judged before the failure is kept; a rerun goes on
					// from there.
					return fmt.Errorf("consolidate %s (after %d LLM calls, %d resolutions applied): %w",
						rep.Scope, rep.ChatCalls, rep.Applied, err)
				}
				if *asJSON {
					if rep.Resolutions == nil {
						rep.Resolutions = []consolidate.Resolved{}
					}
					return printJSON(e.stdout, rep)
				}
				fmt.Fprintf(e.stdout, "scope %s: %d changed beliefs, %d clusters (%d judged before), %d LLM calls\n",
					rep.Scope, rep.Seeds, rep.Clusters, rep.Judged, rep.ChatCalls)
				if len(rep.Resolutions) > 0 {
					tw := table(e.stdout, "OUTCOME", "REASON", "BELIEF", "REPLACED BY", "DETAIL")
					for _, r := range rep.Resolutions {
						fmt.Fprintf(tw, "%s\t%s\t%d %s\t%d %s\t%s\n", r.Outcome, r.Reason, r.BeliefID, clip(r.Statement),
							r.ReplacedBy, clip(r.ReplacedByStatement), r.Detail)
					}
					if err := tw.Flush(); err != nil {
						return err
					}
				}
				fmt.Fprintf(e.stdout, "resolutions applied: %d, conflicts: %d", rep.Applied, rep.Conflicts)
				if rep.Malformed > 0 {
					fmt.Fprintf(e.stdout, ", clusters left after malformed answers: %d", rep.Malformed)
				}
				fmt.Fprintln(e.stdout)
				return nil
			}
		}}
}
