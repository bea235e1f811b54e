package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
	"github.com/credohq/credo/transcript"
)

// Entities, whom a scope's beliefs are about:
//
//	beliefs entities --scope S [--json]
//	beliefs entity --scope S NAME [--history] [--json]
//	beliefs entities merge --scope S --into NAME OTHER [--note TEXT] [--json]
//
// A name is an entity's name or any of its aliases. An unknown name exits 3, as an
// unknown id does, and suggests the nearest name the scope knows.

func entitiesCommands() []command {
	return []command{entitiesCommand(), entityCommand(), entitiesMergeCommand()}
}

func entitiesCommand() command {
	return command{name: "entities", usage: "whom a scope's beliefs are about: names, kinds, aliases, current beliefs", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope to read (required)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				if err := requireScope(*scope); err != nil {
					return err
				}
				ops, err := e.operator(ctx, false)
				if err != nil {
					return err
				}
				es, err := ops.Entities(ctx, operator.Owner, *scope)
				if err != nil {
					return err
				}
				// No entity may be a misspelt scope, which would read as an empty registry.
				if err := e.knownScope(ctx, *scope, false, len(es)); err != nil {
					return err
				}
				if *asJSON {
					if es == nil {
						es = []memory.Entity{}
					}
					return printJSON(e.stdout, es)
				}
				tw := table(e.stdout, "NAME", "KIND", "ALIASES", "CURRENT")
				for _, en := range es {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", en.Name, en.Kind, aliasList(en.Aliases), en.CurrentBeliefs)
				}
				return tw.Flush()
			}
		}}
}

func entityCommand() command {
	return command{name: "entity", usage: "one entity, by name or alias: its current beliefs by slot, or each slot's chain", groups: config.GroupDB,
		args: "NAME",
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope to read (required)")
			history := fs.Bool("history", false, "each slot's chain, oldest first, with what no longer holds")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				if err := requireScope(*scope); err != nil {
					return err
				}
				name, err := oneName(e.args, "NAME", "beliefs entity --scope S NAME")
				if err != nil {
					return err
				}
				ops, err := e.operator(ctx, false)
				if err != nil {
					return err
				}
				view, err := ops.Entity(ctx, operator.Owner, *scope, name, *history)
				if err != nil {
					return e.entityError(ctx, *scope, err)
				}
				if *asJSON {
					if view.Slots == nil {
						view.Slots = []memory.Slot{}
					}
					return printJSON(e.stdout, view)
				}
				return printEntity(e.stdout, view, *history)
			}
		}}
}

func entitiesMergeCommand() command {
	return command{name: "entities merge", usage: "an operator's decision that two names are one entity: OTHER's names and beliefs become NAME's", groups: config.GroupDB,
		args: "OTHER",
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope (required)")
			into := fs.String("into", "", "the entity that stays, by name or alias (required)")
			note := fs.String("note", "", "why, kept with the review items the merge closes")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				if err := requireScope(*scope); err != nil {
					return err
				}
				if strings.TrimSpace(*into) == "" {
					return config.Usagef("--into is required")
				}
				other, err := oneName(e.args, "OTHER", "beliefs entities merge --scope S --into NAME OTHER")
				if err != nil {
					return err
				}
				if err := checkInput(transcript.CheckText("--note", *note, memory.MaxNoteLen)); err != nil {
					return err
				}
				ops, err := e.operator(ctx, false)
				if err != nil {
					return err
				}
				m, err := ops.MergeEntities(ctx, operator.Owner, memory.Merge{Scope: *scope, Into: *into, Other: other, Note: *note})
				if err != nil {
					return e.entityError(ctx, *scope, err)
				}
				if *asJSON {
					return printJSON(e.stdout, m)
				}
				fmt.Fprintf(e.stdout, "merged %q into %q: %d %s moved; %q now also goes by %s\n", other, m.Entity.Name,
					m.Moved, plural(int(m.Moved), "belief"), m.Entity.Name, aliasList(m.Entity.Aliases))
				if len(m.Closed) > 0 {
					fmt.Fprintf(e.stdout, "closed %s %s\n", plural(len(m.Closed), "review item"), joinIDs(m.Closed))
				}
				return nil
			}
		}}
}

// oneName is the one argument a command takes besides its flags.
func oneName(args []string, what, form string) (string, error) {
	if len(args) != 1 {
		return "", config.Usagef("give one %s: %s", what, form)
	}
	if strings.TrimSpace(args[0]) == "" {
		return "", config.Usagef("%s is blank", what)
	}
	return args[0], nil
}

// entityError makes a name that could never be an entity's bad input (exit 2). An
// unknown name in a scope never written is the scope's mistake: not found, naming the
// nearest scope, rather than a name suggested from an empty registry.
func (e *env) entityError(ctx context.Context, scope string, err error) error {
	if errors.Is(err, memory.ErrUnknownEntity) {
		if known := e.knownScope(ctx, scope, false, 0); known != nil {
			return known
		}
		return err
	}
	return checkInput(err)
}

// printEntity shows an entity and, slot by slot, its current beliefs or, with history,
// each slot's chain oldest first.
func printEntity(w io.Writer, v *memory.EntityView, history bool) error {
	fmt.Fprintf(w, "%s (%s)", v.Name, v.Kind)
	if len(v.Aliases) > 0 {
		fmt.Fprintf(w, ", also %s", aliasList(v.Aliases))
	}
	fmt.Fprintf(w, ": %d current %s\n\n", v.CurrentBeliefs, plural(v.CurrentBeliefs, "belief"))
	if len(v.Slots) == 0 {
		fmt.Fprintln(w, "no beliefs")
		return nil
	}
	if !history {
		tw := table(w, "SLOT", "ID", "STATEMENT", "VALID")
		for _, s := range v.Slots {
			slot := s.Attribute
			for _, b := range s.Current {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", slot, b.ID, clip(b.Statement), validSpan(b))
				slot = "" // the slot's name once, on its first row
			}
		}
		return tw.Flush()
	}
	tw := table(w, "SLOT", "ID", "STATUS", "STATEMENT", "VALID")
	for _, s := range v.Slots {
		chain := s.History
		if chain == nil {
			chain = s.Current // nothing but what is current
		}
		slot := s.Attribute
		for _, b := range chain {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", slot, b.ID, b.Status, clip(b.Statement), validSpan(b))
			slot = ""
		}
	}
	return tw.Flush()
}

func aliasList(aliases []string) string {
	if len(aliases) == 0 {
		return "-"
	}
	return strings.Join(aliases, ", ")
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}
