package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
	"github.com/credohq/credo/transcript"
)

func conflictsCommand() command {
	return command{name: "conflicts", usage: "the review queue: refused revisions and beliefs whose basis changed", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope to read (required)")
			all := fs.Bool("all", false, "include resolved items")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				store, err := e.openScope(ctx, *scope)
				if err != nil {
					return err
				}
				cs, err := store.Conflicts(ctx, *scope, *all)
				if err != nil {
					return err
				}
				if err := e.knownScope(ctx, *scope, false, len(cs)); err != nil {
					return err
				}
				if *asJSON {
					if cs == nil {
						cs = []memory.Conflict{}
					}
					return printJSON(e.stdout, cs)
				}
				// The target's statement beside the proposal, and the cause in words: what a
				// reviewer decides on without a second read (--json has the measures too).
				tw := table(e.stdout, "ID", "WHEN", "KIND", "ACTION", "BELIEF", "TARGET", "TARGET NOW", "STATEMENT", "WHY", "RESOLUTION")
				for _, c := range cs {
					kind := string(c.Kind)
					if c.Cause != nil {
						kind += " (" + string(*c.Cause) + ")"
					}
					resolution := "open"
					if c.Resolution != nil {
						resolution = string(*c.Resolution)
					}
					target, why := "-", c.Why
					if c.Target != nil {
						target = c.Target.Statement + " (" + string(c.Target.Status) + ")"
					}
					if why == "" {
						why = c.Detail
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.CreatedAt.Format(time.DateTime), kind, c.Action,
						idOr(c.BeliefID), idOr(c.TargetID), clip(target), clip(c.Statement), why, resolution)
				}
				return tw.Flush()
			}
		}}
}

func resolveCommand() command {
	return command{name: "resolve", usage: "decide a review item: apply or dismiss it", groups: config.GroupDB | config.GroupLLM,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "review item id, from `beliefs conflicts` (required)")
			apply := fs.Bool("apply", false, "carry out the refused revision as an operator, or retract the belief whose basis changed")
			dismiss := fs.Bool("dismiss", false, "leave memory as it is")
			note := fs.String("note", "", "why, kept with the item")
			scope := fs.String("scope", "", "when set, an item of another scope is not found")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				n, err := parseID(*id)
				if err != nil {
					return err
				}
				if *apply == *dismiss {
					return config.Usagef("give exactly one of --apply and --dismiss")
				}
				if err := checkInput(transcript.CheckText("--note", *note, memory.MaxNoteLen)); err != nil {
					return err
				}
				verdict := memory.VerdictDismiss
				if *apply {
					verdict = memory.VerdictApply
				}
				ops, err := e.operator(ctx, true)
				if err != nil {
					return err
				}
				if *scope != "" {
					item, err := ops.Item(ctx, operator.Owner, n)
					if err != nil {
						return err
					}
					if item.Scope != *scope {
						return fmt.Errorf("review item %d in scope %q: %w", n, *scope, memory.ErrNotFound)
					}
				}
				got, err := ops.Resolve(ctx, operator.Owner, n, verdict, *note)
				if errors.Is(err, llm.ErrEmbedding) {
					return fmt.Errorf("embed the decision (is the embedding server up?); nothing was changed: %w", err)
				}
				if err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, got)
				}
				fmt.Fprintf(e.stdout, "review item %d %s", n, *got.Item.Resolution)
				if o := got.Outcome; o != nil {
					fmt.Fprintf(e.stdout, ": %s", o.Kind)
					if o.TargetID != 0 {
						fmt.Fprintf(e.stdout, " belief %d", o.TargetID)
					}
					if o.BeliefID != 0 {
						fmt.Fprintf(e.stdout, ", belief %d", o.BeliefID)
					}
				}
				fmt.Fprintln(e.stdout)
				return nil
			}
		}}
}

func idOr(id *int64) string {
	if id == nil {
		return "-"
	}
	return strconv.FormatInt(*id, 10)
}
