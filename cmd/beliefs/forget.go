package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
	"github.com/credohq/credo/transcript"
)

// forgetCommand is
//
//	beliefs forget (--id ID | --match TEXT | --entity NAME | --all) [--scope S] [--purge]
//	beliefs forget --scope-prefix P --all --purge [--yes]
//
// Soft by default: the beliefs become forgotten, leave every read but `list --all` and
// every prompt, and stay for audit. --purge erases them and every copy of their text
// for good; --entity --purge erases the entity and its names too ("everything about my
// ex"); --all --purge erases the whole scope, and with --scope-prefix every scope
// starting with P.
func forgetCommand() command {
	return command{name: "forget", usage: "forget beliefs (soft), or erase them for good with --purge", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope (required with --match, --entity and --all; with --id, the belief's)")
			id := fs.String("id", "", "forget this belief")
			match := fs.String("match", "", "forget the beliefs whose statement, quote, subject or attribute contains TEXT, ignoring case")
			ent := fs.String("entity", "", "forget every belief about the entity of this name or alias; with --purge, erase the entity and its names too")
			all := fs.Bool("all", false, "forget every belief of the scope; with --purge, erase the whole scope")
			purge := fs.Bool("purge", false, "erase for good: beliefs, revision events, conflicts, transcripts and job rows holding them")
			prefix := fs.String("scope-prefix", "", "with --all --purge: erase every scope starting with P (an organisation's subtree)")
			yes := fs.Bool("yes", false, "erase a whole scope or subtree without asking (needed without a terminal; an empty --scope-prefix or * needs it always)")
			return func(ctx context.Context, e *env) error {
				if isFlagSet(fs, "scope-prefix") {
					if *scope != "" || *id != "" || *match != "" || *ent != "" || !*all || !*purge {
						return config.Usagef("--scope-prefix erases a subtree: give it with --all --purge, and without --scope, --id, --match or --entity")
					}
					return purgeSubtree(ctx, e, *prefix, *yes)
				}
				given := 0
				for _, set := range []bool{*id != "", *match != "", *ent != "", *all} {
					if set {
						given++
					}
				}
				if given != 1 {
					return config.Usagef("give exactly one of --id, --match, --entity and --all")
				}
				if *match != "" && strings.TrimSpace(*match) == "" {
					return config.Usagef("--match is blank")
				}
				if *ent != "" && strings.TrimSpace(*ent) == "" {
					return config.Usagef("--entity is blank")
				}
				if err := checkInput(transcript.CheckText("--match", *match, transcript.MaxQueryLen)); err != nil {
					return err
				}
				sel := memory.Selection{Scope: strings.TrimSpace(*scope), Match: *match, Entity: *ent, All: *all}
				var n int64
				if *id != "" {
					var err error
					if n, err = parseID(*id); err != nil {
						return err
					}
				} else if err := requireScope(sel.Scope); err != nil {
					return err
				}

				ops, err := e.operator(ctx, false)
				if err != nil {
					return err
				}
				if n != 0 {
					b, err := ops.Belief(ctx, operator.Owner, n)
					if err != nil {
						return err
					}
					if sel.Scope != "" && sel.Scope != b.Scope {
						return fmt.Errorf("belief %d is in scope %q, not %q: %w", n, b.Scope, sel.Scope, memory.ErrNotFound)
					}
					sel.Scope, sel.IDs = b.Scope, []int64{n}
				}

				if !*purge {
					return forget(ctx, e, ops, sel)
				}
				return purgeBeliefs(ctx, e, ops, sel, *yes)
			}
		}}
}

// forget forgets the selected beliefs softly and says which.
func forget(ctx context.Context, e *env, ops *operator.Operator, sel memory.Selection) error {
	ids, err := ops.Forget(ctx, operator.Owner, sel)
	if err != nil {
		return checkInput(err) // an --entity that could be no name
	}
	fmt.Fprintf(e.stdout, "forgot %d %s of scope %q", len(ids), plural(len(ids), "belief"), sel.Scope)
	if len(ids) == 0 {
		fmt.Fprint(e.stdout, " (none matched, or already forgotten)")
	}
	sep := ": "
	for _, id := range ids {
		fmt.Fprintf(e.stdout, "%s%d", sep, id)
		sep = ", "
	}
	fmt.Fprintln(e.stdout)
	return nil
}

// purgeBeliefs erases the selected beliefs, or the whole scope after a confirmation, and
// prints what went.
func purgeBeliefs(ctx context.Context, e *env, ops *operator.Operator, sel memory.Selection, yes bool) error {
	if sel.All {
		// A mistyped scope is reported as such, before any question.
		if scopes, err := e.store.ErasableScopes(ctx, sel.Scope); err != nil {
			return err
		} else if !slices.Contains(scopes, sel.Scope) {
			return fmt.Errorf("scope %q: %w", sel.Scope, memory.ErrNotFound)
		}
		if ok, err := e.confirmed(fmt.Sprintf("Erasing scope %q (its beliefs, events, review items, transcripts and jobs)", sel.Scope), yes); !ok {
			return err
		}
	}
	p, err := ops.Purge(ctx, operator.Owner, sel)
	if err != nil {
		return checkInput(err)
	}
	switch {
	case p.What == memory.PurgedScope:
		fmt.Fprintf(e.stdout, "purged scope %q for good (tombstone %d)", sel.Scope, p.TombstoneID)
	case sel.Entity != "":
		fmt.Fprintf(e.stdout, "purged entity %q of scope %q, its names and beliefs, for good (tombstone %d)", sel.Entity, sel.Scope, p.TombstoneID)
	default:
		fmt.Fprintf(e.stdout, "purged beliefs of scope %q for good (tombstone %d)", sel.Scope, p.TombstoneID)
	}
	if p.Relinked > 0 {
		fmt.Fprintf(e.stdout, "; %d %s relinked over the gap", p.Relinked, plural(p.Relinked, "belief"))
	}
	// Redacted transcripts stay: they are no row removed.
	redacted := int(p.Counts[memory.CountRedactedEpisodes])
	if redacted > 0 {
		fmt.Fprintf(e.stdout, "; %d %s redacted, kept for the beliefs that still come from %s", redacted,
			plural(redacted, "transcript"), map[bool]string{true: "it", false: "them"}[redacted == 1])
	}
	fmt.Fprintln(e.stdout)
	tw := table(e.stdout, "TABLE", "ROWS REMOVED")
	for _, t := range slices.Sorted(maps.Keys(p.Counts)) {
		if t != memory.CountRedactedEpisodes {
			fmt.Fprintf(tw, "%s\t%d\n", t, p.Counts[t])
		}
	}
	return tw.Flush()
}

// purgeSubtree erases every scope starting with prefix. An empty prefix or "*" would
// erase every scope of the database: it needs --yes.
func purgeSubtree(ctx context.Context, e *env, prefix string, yes bool) error {
	if strings.TrimSpace(prefix) == "" || prefix == "*" {
		if !yes {
			return config.Usagef("--scope-prefix %q erases every scope of the database; add --yes if that is what you mean", prefix)
		}
		prefix = ""
	} else if err := checkInput(transcript.CheckScope("--scope-prefix", prefix)); err != nil {
		return err
	}
	ops, err := e.operator(ctx, false)
	if err != nil {
		return err
	}
	scopes, err := e.store.ErasableScopes(ctx, prefix)
	if err != nil {
		return err
	}
	if len(scopes) == 0 {
		fmt.Fprintf(e.stdout, "nothing to erase: no scope starts with %q\n", prefix)
		return nil
	}
	what := fmt.Sprintf("Erasing %d %s starting with %q (%s)", len(scopes), plural(len(scopes), "scope"), prefix, strings.Join(scopes[:min(5, len(scopes))], ", "))
	if len(scopes) > 5 {
		what = strings.TrimSuffix(what, ")") + ", …)"
	}
	if ok, err := e.confirmed(what, yes); !ok {
		return err
	}
	out, err := ops.PurgeSubtree(ctx, operator.Owner, prefix)
	if out != nil {
		for _, p := range out.Scopes {
			fmt.Fprintf(e.stdout, "purged scope %q for good (tombstone %d)\n", p.Scope, p.TombstoneID)
		}
	}
	if err != nil {
		return err
	}
	if len(out.Scopes) == 0 {
		fmt.Fprintf(e.stdout, "nothing to erase: no scope starts with %q\n", prefix)
		return nil
	}
	tw := table(e.stdout, "TABLE", "ROWS REMOVED")
	for _, t := range slices.Sorted(maps.Keys(out.Counts)) {
		fmt.Fprintf(tw, "%s\t%d\n", t, out.Counts[t])
	}
	return tw.Flush()
}

// isFlagSet says whether the flag was given, even empty.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
