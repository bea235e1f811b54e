package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/user"
	"strconv"
	"time"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
	"github.com/credohq/credo/transcript"
)

func revertCommand() command {
	return command{name: "revert", usage: "undo one applied revision as an operator", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("event", "", "revision event id, from `beliefs events` (required)")
			note := fs.String("note", "", "why the revision was wrong; later extractions are shown it")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				if *id == "" {
					return config.Usagef("--event is required")
				}
				n, err := strconv.ParseInt(*id, 10, 64)
				if err != nil || n <= 0 {
					return config.Usagef("--event %q is not an event id", *id)
				}
				if err := checkInput(transcript.CheckText("--note", *note, memory.MaxNoteLen)); err != nil {
					return err
				}
				ops, err := e.operator(ctx, false)
				if err != nil {
					return err
				}
				by := "the CLI"
				if u, err := user.Current(); err == nil && u.Username != "" {
					by = "CLI user " + u.Username
				}
				got, err := ops.Revert(ctx, operator.Owner, n, *note, by)
				if err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, got)
				}
				fmt.Fprintf(e.stdout, "event %d reverted by event %d", n, got.Revert.ID)
				for _, b := range got.Restored {
					fmt.Fprintf(e.stdout, "; belief %d current again", b)
				}
				for _, b := range got.Retracted {
					fmt.Fprintf(e.stdout, "; belief %d retracted as never true", b)
				}
				if got.Unreinforced != nil {
					fmt.Fprintf(e.stdout, "; restatement of belief %d taken back", *got.Unreinforced)
				}
				fmt.Fprintln(e.stdout)
				return nil
			}
		}}
}

func auditCommand() command {
	return command{name: "audit", usage: "how precise revisions were: by origin, action and reason, reverted and corrected, and review decisions", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "audit this scope")
			prefix := fs.String("scope-prefix", "", "audit every scope starting with this prefix (default: every scope)")
			since := fs.String("since", "", "only what was made at or after this time (RFC 3339 or date)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				q := memory.AuditQuery{Scope: *scope, ScopePrefix: *prefix}
				switch {
				case *scope != "" && *prefix != "":
					return config.Usagef("give --scope or --scope-prefix, not both")
				case *scope != "":
					if err := requireScope(*scope); err != nil {
						return err
					}
				case *prefix != "":
					if err := checkInput(transcript.CheckScope("--scope-prefix", *prefix)); err != nil {
						return err
					}
				}
				var err error
				if q.Since, err = parseOptionalTime("since", *since); err != nil {
					return err
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				a, err := store.Audit(ctx, q)
				if err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, a)
				}
				return printAudit(e.stdout, a)
			}
		}}
}

// printAudit prints an audit as three tables: precision per origin, the revisions
// behind it, and the refusals with their decisions.
func printAudit(w io.Writer, a *memory.Audit) error {
	tw := table(w, "ORIGIN", "APPLIED", "REVERTED", "CORRECTED", "PRECISION")
	for _, o := range a.Origins {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", o.Origin, o.Applied, o.Reverted, o.Corrected, precision(o.Precision))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d reverts by operators\n\n", a.Reverts)
	tw = table(w, "ORIGIN", "ACTION", "REASON", "APPLIED", "REVERTED", "CORRECTED")
	for _, r := range a.Revisions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\n", r.Origin, r.Action, r.Reason, r.Applied, r.Reverted, r.Corrected)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = table(w, "REFUSED", "CAUSE", "ITEMS", "OPEN", "APPLIED", "DISMISSED", "CLOSED")
	for _, f := range a.Refusals {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", f.Origin, f.Cause, f.Refused, f.Open, f.Applied, f.Dismissed, f.Closed)
	}
	return tw.Flush()
}

// precision is p as a percentage, or "-" when nothing was applied.
func precision(p *float64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p*100, 'f', 1, 64) + "%"
}

// revertState is how an event stands: what it reverts, or who reverted it and when.
func revertState(ev memory.Event) string {
	switch {
	case ev.Reverts != nil:
		return "reverts " + strconv.FormatInt(*ev.Reverts, 10)
	case ev.RevertedBy != nil:
		return fmt.Sprintf("reverted by %d at %s", *ev.RevertedBy, ev.RevertedAt.Format(time.DateTime))
	}
	return "-"
}
