package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/credohq/credo/internal/app"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
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
					return usagef("--all, --as-of and --known-at exclude each other")
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
				if err := requireScope(*scope); err != nil {
					return err
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				evs, err := store.Events(ctx, *scope, *limit)
				if err != nil {
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
					return usagef("--statement and --attribute are required")
				}
				f := memory.Fact{Statement: *statement, Subject: *subject, Attribute: *attribute, Kind: memory.Kind(*kind),
					Confidence: 1, Origin: memory.OriginUserStated}
				if *authoritative {
					f.Origin = memory.OriginAuthoritative
				}
				if *validFrom != "" {
					t, err := parseTime("valid-from", *validFrom)
					if err != nil {
						return err
					}
					f.ValidFrom = &t
				}
				out, err := operatorApply(ctx, e, &memory.Batch{Scope: *scope, Facts: []memory.Fact{f}}, "")
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
					return usagef("give exactly one of --statement and --retract")
				}
				if *reason != string(memory.ReasonCorrection) && *reason != string(memory.ReasonTemporal) {
					return usagef("--reason %q is not correction or temporal", *reason)
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				old, err := store.Get(ctx, n)
				if err != nil {
					return err
				}
				f := memory.Fact{Statement: *statement, Subject: old.Subject, Attribute: old.Attribute, Kind: old.Kind,
					Confidence: 1, Origin: memory.OriginUserStated, Quote: "operator correction",
					Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.Reason(*reason),
						Rationale: "operator correction"}}
				if old.Origin == memory.OriginAuthoritative {
					f.Origin = memory.OriginAuthoritative
				}
				if *retract {
					f.Resolves.Action = memory.ActionRetract
				}
				out, err := operatorApply(ctx, e, &memory.Batch{Scope: old.Scope, Candidates: []int64{n}, Facts: []memory.Fact{f}}, old.Statement)
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

// operatorApply embeds the batch's statement, and the revision it makes as a future
// few-shot example, in one call, and applies the batch with origin operator. old is the
// statement revised, if any.
func operatorApply(ctx context.Context, e *env, b *memory.Batch, old string) (memory.Outcome, error) {
	store, err := e.open(ctx)
	if err != nil {
		return memory.Outcome{}, err
	}
	_, embed, err := app.Providers(e.cfg)
	if err != nil {
		return memory.Outcome{}, err
	}
	f := &b.Facts[0]
	var texts []string
	if f.Statement != "" {
		texts = append(texts, f.Statement)
	}
	if f.Resolves != nil {
		texts = append(texts, memory.EventText(old, f.Quote, f.Statement))
	}
	res, err := embed.Embed(ctx, texts)
	if err != nil {
		return memory.Outcome{}, fmt.Errorf("embed the statement (is the embedding server up?): %w", err)
	}
	b.EmbedModel = embed.EmbedModel()
	if f.Statement != "" {
		f.Embedding = res.Vectors[0]
	}
	if f.Resolves != nil {
		f.EventEmbedding = res.Vectors[len(texts)-1]
	}
	b.Origin, b.At = memory.RevisionOperator, time.Now()
	applied, err := store.Apply(ctx, b)
	if err != nil {
		return memory.Outcome{}, err
	}
	out := applied.Facts[0]
	if out.Kind == memory.OutcomeConflict {
		return out, fmt.Errorf("refused: %s", out.Detail)
	}
	return out, nil
}

func parseID(s string) (int64, error) {
	if s == "" {
		return 0, usagef("--id is required")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, usagef("--id %q is not a belief id", s)
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
		valid := b.ValidFrom.Format(time.DateOnly) + " .. "
		if b.ValidUntil != nil {
			valid += b.ValidUntil.Format(time.DateOnly)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%.2f\n", b.ID, b.Status, b.Attribute, clip(b.Statement), valid, b.Origin, b.Confidence)
	}
	return tw.Flush()
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
