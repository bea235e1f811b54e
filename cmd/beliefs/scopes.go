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
	// ReembedPending counts the beliefs and revision events embedded with another model
	// than EMBED_MODEL, and the dismissed review items without a vector of it: what the
	// background re-embedding has left (beliefs reembed).
	ReembedPending int `json:"reembed_pending"`
}

func scopesCommand() command {
	return command{name: "scopes", usage: "scopes with their current beliefs, extraction backlog and what is left to re-embed",
		groups: config.GroupDB | config.GroupLLM,
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
				reembed, err := store.ReembedPending(ctx, e.cfg.EmbedModel, *prefix)
				if err != nil {
					return err
				}
				now := time.Now()
				rows := make([]scopeRow, len(scopes))
				for i, s := range scopes {
					rows[i] = scopeRow{ScopeStatus: s, ReembedPending: reembed[s.Scope]}
					if s.OldestPendingAt != nil {
						age := now.Sub(*s.OldestPendingAt).Seconds()
						rows[i].OldestPendingAgeSeconds = &age
					}
				}
				if *asJSON {
					return printJSON(e.stdout, rows)
				}
				tw := table(e.stdout, "SCOPE", "CURRENT", "PENDING", "FAILED", "OLDEST PENDING", "TO RE-EMBED")
				for _, r := range rows {
					oldest := "-"
					if r.OldestPendingAgeSeconds != nil {
						oldest = (time.Duration(*r.OldestPendingAgeSeconds) * time.Second).String() + " ago"
					}
					fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\n", r.Scope, r.CurrentBeliefs, r.PendingEpisodes, r.FailedEpisodes, oldest, r.ReembedPending)
				}
				return tw.Flush()
			}
		}}
}
