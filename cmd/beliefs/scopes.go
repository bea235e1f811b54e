package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
)

// scopeRow is one line of `beliefs scopes --json`.
type scopeRow struct {
	memory.ScopeStatus
	// OldestPendingAgeSeconds is how long the oldest pending episode has waited.
	OldestPendingAgeSeconds *float64 `json:"oldest_pending_age_seconds"`
}

func scopesCommand() command {
	return command{name: "scopes", usage: "scopes with their current beliefs and extraction backlog", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			prefix := fs.String("prefix", "", "only scopes starting with this")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				scopes, err := store.Scopes(ctx, *prefix)
				if err != nil {
					return err
				}
				now := time.Now()
				rows := make([]scopeRow, len(scopes))
				for i, s := range scopes {
					rows[i] = scopeRow{ScopeStatus: s}
					if s.OldestPendingAt != nil {
						age := now.Sub(*s.OldestPendingAt).Seconds()
						rows[i].OldestPendingAgeSeconds = &age
					}
				}
				if *asJSON {
					return printJSON(e.stdout, rows)
				}
				tw := table(e.stdout, "SCOPE", "CURRENT", "PENDING", "FAILED", "OLDEST PENDING")
				for _, r := range rows {
					oldest := "-"
					if r.OldestPendingAgeSeconds != nil {
						oldest = (time.Duration(*r.OldestPendingAgeSeconds) * time.Second).String() + " ago"
					}
					fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", r.Scope, r.CurrentBeliefs, r.PendingEpisodes, r.FailedEpisodes, oldest)
				}
				return tw.Flush()
			}
		}}
}
