package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
)

func listCommand() command {
	return command{name: "list", usage: "current beliefs of a scope, or all, or at a time", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope to read (required)")
			all := fs.Bool("all", false, "include superseded, retracted and forgotten beliefs")
			asOf := fs.String("as-of", "", "what was true at this valid time (RFC 3339 or date)")
			knownAt := fs.String("known-at", "", "what memory believed at this time (RFC 3339 or date)")
			inherit := fs.Bool("inherit", false, "add the ancestor scopes' beliefs on the slots the scope does not fill (acme/team/user:1 inherits from acme/team and acme)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				if err := requireScope(*scope); err != nil {
					return err
				}
				var at time.Time
				var err error
				switch {
				case *asOf != "" && *knownAt != "", (*asOf != "" || *knownAt != "") && *all:
					return config.Usagef("--all, --as-of and --known-at exclude each other")
				case *asOf != "":
					at, err = parseTime("as-of", *asOf)
				case *knownAt != "":
					at, err = parseTime("known-at", *knownAt)
				}
				if err != nil {
					return err
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				var read memory.ScopeRead
				switch {
				case *all:
					read = store.All
				case *asOf != "":
					read = func(ctx context.Context, scope string) ([]memory.Belief, error) { return store.AsOf(ctx, scope, at) }
				case *knownAt != "":
					read = func(ctx context.Context, scope string) ([]memory.Belief, error) { return store.KnownAt(ctx, scope, at) }
				default:
					read = store.Current
				}
				var bs []memory.Belief
				if *inherit {
					bs, err = store.Inherited(ctx, *scope, read)
				} else {
					bs, err = read(ctx, *scope)
				}
				if err != nil {
					return err
				}
				if err := e.knownScope(ctx, *scope, *inherit, len(bs)); err != nil {
					return err
				}
				if err := printBeliefs(e.stdout, bs, *asJSON); err != nil {
					return err
				}
				return noteUnprocessed(ctx, e, store, *scope)
			}
		}}
}

func historyCommand() command {
	return command{name: "history", usage: "the supersession chain through one belief, oldest first", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "belief id (required)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				n, err := parseID(*id)
				if err != nil {
					return err
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				bs, err := store.History(ctx, n)
				if err != nil {
					return err
				}
				return printBeliefs(e.stdout, bs, *asJSON)
			}
		}}
}

func eventsCommand() command {
	return command{name: "events", usage: "revision events (labeled examples) of a scope, newest first", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope to read (required)")
			limit := fs.Int("limit", 0, "at most this many (0: all)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				store, err := e.openScope(ctx, *scope)
				if err != nil {
					return err
				}
				evs, err := store.Events(ctx, *scope, *limit)
				if err != nil {
					return err
				}
				if err := e.knownScope(ctx, *scope, false, len(evs)); err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, evs)
				}
				tw := table(e.stdout, "ID", "WHEN", "ACTION", "REASON", "ORIGIN", "OLD", "NEW", "REVERT")
				for _, ev := range evs {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ev.ID, ev.CreatedAt.Format(time.DateTime), ev.Action, ev.Reason,
						ev.Origin, clip(ev.OldStatement), clip(deref(ev.NewStatement, "-")), revertState(ev))
				}
				return tw.Flush()
			}
		}}
}

func addCommand() command {
	return command{name: "add", usage: "assert a belief as an operator", groups: config.GroupDB | config.GroupLLM,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope (required)")
			statement := fs.String("statement", "", "the belief, one sentence (required)")
			attribute := fs.String("attribute", "", "the slot it fills, e.g. location (required)")
			subject := fs.String("subject", "user", "who or what it is about")
			kind := fs.String("kind", "attribute", "attribute, preference, relation, event, plan or other")
			authoritative := fs.Bool("authoritative", false, "only an operator may ever change it")
			validFrom := fs.String("valid-from", "", "when it became true (default now)")
			return func(ctx context.Context, e *env) error {
				if err := requireScope(*scope); err != nil {
					return err
				}
				if strings.TrimSpace(*statement) == "" || strings.TrimSpace(*attribute) == "" {
					return config.Usagef("--statement and --attribute are required")
				}
				p := operator.AssertParams{Scope: *scope, Statement: *statement, Attribute: *attribute, Subject: *subject,
					Kind: memory.Kind(*kind), Authoritative: *authoritative}
				if *validFrom != "" {
					t, err := parseTime("valid-from", *validFrom)
					if err != nil {
						return err
					}
					p.ValidFrom = &t
				}
				out, err := e.revise(ctx, func(ops *operator.Operator) (memory.Outcome, error) {
					return ops.Assert(ctx, operator.Owner, p)
				})
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s: belief %d\n", out.Kind, max(out.BeliefID, out.TargetID))
				return nil
			}
		}}
}

func correctCommand() command {
	return command{name: "correct", usage: "an operator's revision of one belief", groups: config.GroupDB | config.GroupLLM,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "belief id (required)")
			statement := fs.String("statement", "", "what is true instead")
			retract := fs.Bool("retract", false, "retract the belief with no replacement")
			reason := fs.String("reason", "correction", "correction (it was wrong) or temporal (it changed)")
			return func(ctx context.Context, e *env) error {
				n, err := parseID(*id)
				if err != nil {
					return err
				}
				if (*statement == "") == !*retract {
					return config.Usagef("give exactly one of --statement and --retract")
				}
				if *reason != string(memory.ReasonCorrection) && *reason != string(memory.ReasonTemporal) {
					return config.Usagef("--reason %q is not correction or temporal", *reason)
				}
				out, err := e.revise(ctx, func(ops *operator.Operator) (memory.Outcome, error) {
					return ops.Correct(ctx, operator.Owner, operator.CorrectParams{ID: n, Statement: *statement, Retract: *retract,
						Reason: memory.Reason(*reason)})
				})
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s: belief %d", out.Kind, out.TargetID)
				if out.BeliefID != 0 {
					fmt.Fprintf(e.stdout, ", new belief %d", out.BeliefID)
				}
				fmt.Fprintln(e.stdout)
				return nil
			}
		}}
}

// revisionError says what to do about an operator's revision that failed: a failed
// embedding names the server to check.
func revisionError(err error) error {
	if embed, ok := errors.AsType[*llm.EmbeddingError](err); ok {
		return fmt.Errorf("embed the statement (is the embedding server up?): %w", embed.Err)
	}
	return err
}

func parseID(s string) (int64, error) {
	if s == "" {
		return 0, config.Usagef("--id is required")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, config.Usagef("--id %q is not a belief id", s)
	}
	return n, nil
}

func printBeliefs(w io.Writer, bs []memory.Belief, asJSON bool) error {
	if asJSON {
		if bs == nil {
			bs = []memory.Belief{}
		}
		return printJSON(w, bs)
	}
	tw := table(w, "ID", "STATUS", "ATTRIBUTE", "STATEMENT", "VALID", "ORIGIN", "CONF")
	for _, b := range bs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%.2f\n", b.ID, b.Status, b.Attribute, clip(b.Statement), validSpan(b), b.Origin, b.Confidence)
	}
	return tw.Flush()
}

// validSpan is when b holds, by date: "2026-01-15 .. 2026-02-20", open-ended while it
// still holds.
func validSpan(b memory.Belief) string {
	valid := b.ValidFrom.Format(time.DateOnly) + " .. "
	if b.ValidUntil != nil {
		valid += b.ValidUntil.Format(time.DateOnly)
	}
	return valid
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func table(w io.Writer, headers ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	return tw
}

func clip(s string) string {
	if r := []rune(s); len(r) > 70 {
		return string(r[:69]) + "…"
	}
	return s
}

func deref(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}
