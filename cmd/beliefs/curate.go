package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/credohq/credo/internal/config"
)

// curateCommand is
//
//	beliefs curate [--dry-run] [--json]
//
// It runs the worker's periodic history curation now: superseded, retracted and
// forgotten beliefs retired longer ago than RETAIN_HISTORY are purged, with every copy
// of their text. --dry-run lists what would go and removes nothing.
func curateCommand() command {
	return command{name: "curate", usage: "purge history older than RETAIN_HISTORY now (--dry-run: list it)",
		groups: config.GroupDB | config.GroupRetention,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			dryRun := fs.Bool("dry-run", false, "list what would be removed, and remove nothing")
			asJSON := fs.Bool("json", false, "print what was removed as JSON")
			return func(ctx context.Context, e *env) error {
				if e.cfg.RetainHistory == 0 {
					return config.Usagef("RETAIN_HISTORY is not set: history is kept forever")
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				curated, err := store.Curate(ctx, e.cfg.RetainHistory, *dryRun, e.cfg.ExamplesScope)
				if curated == nil {
					return err
				}
				// What was curated before an error is removed all the same: it is shown.
				if *asJSON {
					if perr := printJSON(e.stdout, curated); perr != nil {
						return perr
					}
					return err
				}
				before := curated.RetiredBefore.Format(time.RFC3339)
				if len(curated.Scopes) == 0 {
					if err == nil {
						fmt.Fprintf(e.stdout, "nothing to curate: no belief was retired before %s\n", before)
					}
					return err
				}
				if curated.DryRun {
					fmt.Fprintf(e.stdout, "would remove the history retired before %s (dry run: nothing removed):\n", before)
				} else {
					fmt.Fprintf(e.stdout, "removed the history retired before %s:\n", before)
				}
				tw := table(e.stdout, "SCOPE", "BELIEFS", "EPISODES", "EVENTS", "CONFLICTS")
				var beliefs, episodes int
				for _, s := range curated.Scopes {
					beliefs, episodes = beliefs+len(s.BeliefIDs), episodes+len(s.EpisodeIDs)
					fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", s.Scope, len(s.BeliefIDs), len(s.EpisodeIDs),
						s.Counts["revision_event"], s.Counts["belief_conflict"])
				}
				fmt.Fprintf(tw, "TOTAL\t%d\t%d\t%d\t%d\n", beliefs, episodes,
					curated.Total("revision_event"), curated.Total("belief_conflict"))
				if ferr := tw.Flush(); ferr != nil {
					return ferr
				}
				return err
			}
		}}
}
