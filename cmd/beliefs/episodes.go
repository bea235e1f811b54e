package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
)

func episodesCommand() command {
	return command{name: "episodes", usage: "the transcripts of a scope and how their extraction went", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope to read (required)")
			state := fs.String("state", "", "only pending, applied or failed episodes")
			limit := fs.Int("limit", memory.MaxEpisodes, fmt.Sprintf("at most this many, latest first (at most %d)", memory.MaxEpisodes))
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				if err := requireScope(*scope); err != nil {
					return err
				}
				if st := memory.EpisodeState(*state); st != "" && !st.Valid() {
					return config.Usagef("--state %q is not pending, applied or failed", *state)
				}
				if *limit < 1 || *limit > memory.MaxEpisodes {
					return config.Usagef("--limit must be within 1..%d", memory.MaxEpisodes)
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				es, err := store.Episodes(ctx, memory.EpisodeQuery{Scope: *scope, State: memory.EpisodeState(*state), Limit: *limit})
				if err != nil {
					return err
				}
				if err := e.knownScope(ctx, *scope, false, len(es)); err != nil {
					return err
				}
				if *asJSON {
					out := make([]api.Episode, len(es))
					for i, ep := range es {
						out[i] = api.EpisodeOf(ep)
					}
					return printJSON(e.stdout, out)
				}
				tw := table(e.stdout, "ID", "OCCURRED", "STATE", "ATTEMPTS", "EXTERNAL ID", "LAST ERROR")
				for _, ep := range es {
					state := ep.State
					if ep.RedactedAt != nil {
						state += " (redacted)"
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\n", ep.ID, ep.OccurredAt.Format(time.DateTime), state, ep.Attempts,
						deref(ep.ExternalID, "-"), clip(deref(ep.LastError, "")))
				}
				return tw.Flush()
			}
		}}
}

// noteUnprocessed says on stderr when some of the scope's transcripts are not in what
// was just listed: still waiting for extraction, or failed.
func noteUnprocessed(ctx context.Context, e *env, store *memory.Store, scope string) error {
	pending, failed, err := store.Unprocessed(ctx, scope)
	if err != nil || pending+failed == 0 {
		return err
	}
	fmt.Fprintf(e.stderr, "beliefs: %q has %d pending and %d failed %s not in this list; see `beliefs episodes --scope %s`\n",
		scope, pending, failed, plural(pending+failed, "episode"), scope)
	return nil
}
