package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transfer"
)

// exportCommand is
//
//	beliefs export (--scope S | --scope-prefix P) [--output FILE] [--since T]
//
// It writes what memory holds of a scope, or of every scope under a prefix, as JSON
// Lines (docs/api.md, "Export and import"): one snapshot, streamed, without vectors.
func exportCommand() command {
	return command{name: "export", usage: "write a scope's (or a subtree's) memory as JSON lines, to keep or to import elsewhere",
		groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "the scope to export")
			prefix := fs.String("scope-prefix", "", "export every scope starting with this prefix")
			output := fs.String("output", "", "write to this file (default: standard output); it appears only once whole")
			since := fs.String("since", "", "only what changed at or after this time (RFC 3339 or a date): a part, which is not imported")
			return func(ctx context.Context, e *env) error {
				if (*scope == "") == (*prefix == "") {
					return config.Usagef("give --scope or --scope-prefix")
				}
				q := memory.ExportQuery{Scope: *scope, ScopePrefix: *prefix}
				var err error
				if q.Since, err = parseOptionalTime("since", *since); err != nil {
					return err
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				exp, err := transfer.OpenExport(ctx, store, q)
				if err != nil {
					return checkInput(err)
				}
				defer exp.Close(ctx)
				if *output == "" {
					return exp.WriteTo(ctx, e.stdout)
				}
				if err := writeFileWhole(*output, func(w io.Writer) error { return exp.WriteTo(ctx, w) }); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "exported %s to %s\n", counted(len(exp.Header().Scopes), "scope", "scopes"), *output)
				return nil
			}
		}}
}

// writeFileWhole writes path through write, in a file beside it renamed into place once
// whole: an export cut short leaves no file that looks like one.
func writeFileWhole(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // gone once renamed
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// repeated is a flag given any number of times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ", ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// importCommand is
//
//	beliefs import FILE [--scope-map OLD=NEW]... [--from credo|mem0] [--scope-template T] [--json]
//
// It imports an export (or, --from mem0, mem0's exported memories) into scopes that
// hold nothing; FILE - is standard input.
func importCommand() command {
	return command{name: "import", args: "FILE", usage: "import an export, or mem0's memories (--from mem0), into scopes that hold nothing",
		groups: config.GroupDB | config.GroupLLM,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			var scopeMap repeated
			fs.Var(&scopeMap, "scope-map", "OLD=NEW: import scope OLD, and the scopes under OLD/, as NEW (repeatable)")
			from := fs.String("from", transfer.FromCredo, "what FILE is: credo (an export) or mem0 (mem0's get_all, {\"results\": [...]}, or its array)")
			tmpl := fs.String("scope-template", "", "with --from mem0: each memory's scope, a fixed one (user:alex) or from {user_id}, {agent_id}, {app_id} and {run_id} (default "+transfer.DefaultScopeTemplate+")")
			asJSON := fs.Bool("json", false, "print what was imported as JSON")
			return func(ctx context.Context, e *env) error {
				if len(e.args) != 1 {
					return config.Usagef("give one FILE to import (- for standard input)")
				}
				if *tmpl != "" && *from != transfer.FromMem0 {
					return config.Usagef("--scope-template goes with --from mem0")
				}
				mapping, err := transfer.ParseScopeMap(scopeMap)
				if err != nil {
					return checkInput(err)
				}
				in, err := openInput(e.args[0])
				if err != nil {
					return err
				}
				defer in.Close()
				store, _, embed, err := e.openModels(ctx)
				if err != nil {
					return err
				}
				logger := app.Logger(e.cfg, e.stderr)
				// An insert-only River client: the worker runs the jobs the import queues.
				jobs, err := river.NewClient(riverpgxv5.New(e.pool), &river.Config{Logger: logger})
				if err != nil {
					return fmt.Errorf("river client: %w", err)
				}
				base, err := app.Redactor(e.cfg)
				if err != nil {
					return err
				}
				im, err := transfer.NewImporter(transfer.Config{Store: store, Embed: embed, EmbedModel: embed.EmbedModel(), Jobs: jobs,
					Redact: base, Logger: logger})
				if err != nil {
					return err
				}
				rep, err := im.Import(ctx, in, transfer.ImportParams{From: *from, ScopeTemplate: *tmpl, ScopeMap: mapping})
				if rep != nil {
					if perr := printImport(e.stdout, rep, *asJSON); perr != nil {
						return perr
					}
				}
				if _, ok := errors.AsType[*transfer.NotEmbeddedError](err); ok {
					return err
				}
				return checkInput(err)
			}
		}}
}

// openInput opens FILE, or standard input for -.
func openInput(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, config.Usage(err)
	}
	return f, nil
}

func printImport(w io.Writer, rep *transfer.Report, asJSON bool) error {
	if asJSON {
		return printJSON(w, rep)
	}
	for _, s := range rep.Scopes {
		fmt.Fprintf(w, "%s: %s, %s, %s, %s, %s, %s", s.Scope, counted(s.Beliefs, "belief", "beliefs"),
			counted(s.Events, "revision event", "revision events"), counted(s.Episodes, "episode", "episodes"),
			counted(s.ReviewItems, "review item", "review items"), counted(s.Dependencies, "dependency", "dependencies"),
			counted(s.Entities, "entity", "entities"))
		if s.ExportedAs != s.Scope {
			fmt.Fprintf(w, " (exported as %s)", s.ExportedAs)
		}
		if s.PendingEpisodes > 0 {
			fmt.Fprintf(w, "; %s to extract", counted(s.PendingEpisodes, "pending episode", "pending episodes"))
		}
		if c := redact.Counts(s.Redacted); c.Total() > 0 {
			fmt.Fprintf(w, "; redacted %d (%s)", c.Total(), c)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "imported %s", counted(len(rep.Scopes), "scope", "scopes"))
	if rep.EmbeddingModel != "" {
		fmt.Fprintf(w, "; embedded %s with %s in %s", counted(rep.EmbeddedRows, "row", "rows"), rep.EmbeddingModel,
			counted(rep.EmbeddingCalls, "call", "calls"))
	}
	if rep.ExtractionJobs > 0 {
		fmt.Fprintf(w, "; %s queued", counted(rep.ExtractionJobs, "extraction job", "extraction jobs"))
	}
	if rep.ConsolidationJobs > 0 {
		fmt.Fprintf(w, "; %s queued", counted(rep.ConsolidationJobs, "consolidation pass", "consolidation passes"))
	}
	fmt.Fprintln(w)
	return nil
}

// counted is n with the word for it.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
