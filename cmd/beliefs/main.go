// Command beliefs reads and administers credo's memory.
//
//	beliefs list --scope S [--all] [--as-of T] [--known-at T] [--inherit] [--json]
//	beliefs context --scope S [--query Q] [--k N] [--budget N] [--inherit] [--as-of T] [--json]
//	beliefs ask --scope S --question Q [--inherit] [--json]
//	beliefs scopes [--prefix P] [--json]
//	beliefs episodes --scope S [--state pending|applied|failed] [--limit N] [--json]
//	beliefs history --id ID [--json]
//	beliefs events --scope S [--json]
//	beliefs conflicts --scope S [--all] [--json]
//	beliefs resolve --id ID (--apply | --dismiss) [--note TEXT] [--scope S] [--json]
//	beliefs revert --event ID [--note TEXT] [--json]
//	beliefs audit [--scope S | --scope-prefix P] [--since T] [--json]
//	beliefs add --scope S --statement TEXT --attribute A [--subject S] [--authoritative]
//	beliefs correct --id ID (--statement TEXT | --retract) [--reason correction|temporal]
//	beliefs entities --scope S [--json]
//	beliefs entity --scope S NAME [--history] [--json]
//	beliefs entities merge --scope S --into NAME OTHER [--note TEXT] [--json]
//	beliefs forget (--id ID | --match TEXT | --entity NAME | --all) [--scope S] [--purge]
//	beliefs forget --scope-prefix P --all --purge [--yes]
//	beliefs consolidate --scope S [--json]
//	beliefs curate [--dry-run] [--json]
//	beliefs reembed [--scope S] [--json]
//	beliefs export (--scope S | --scope-prefix P) [--output FILE] [--since T]
//	beliefs import FILE [--scope-map OLD=NEW]... [--from credo|mem0] [--scope-template T] [--json]
//	beliefs keys create|list|revoke ...
//	beliefs policy set --scope-prefix P [--instructions TEXT] [--redact-pattern NAME=REGEX]... [--redact KINDS]
//	beliefs policy show [--scope S] | unset --scope-prefix P | apply --scope-prefix P [--dry-run]
//	beliefs webhooks create --url URL --scope-prefix P [--events T,...] | list | delete --id ID | test --id ID | rotate --id ID
//	beliefs mcp [--key KEY]
//
// Exit codes: 0 done, 1 failed (a refused revision or revert, an item already
// resolved, an import into a scope that holds memory), 2 bad usage or input, 3 no such
// belief, review item, event or entity, or a scope that never held a transcript or a
// belief.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
	"github.com/credohq/credo/transcript"
)

func main() {
	app.Main("beliefs", func(ctx context.Context) error {
		return runWith(ctx, os.Args[1:], os.Getenv, confirmerOn(os.Stdin, os.Stderr), os.Stdout, os.Stderr)
	}, notFound()...)
}

// confirmer asks the person at the terminal a yes-or-no question; nil when no one is
// there (a script, a pipe, /dev/null).
type confirmer func(question string) (bool, error)

// confirmerOn asks on w when in is a terminal, and is nil otherwise, so that --yes must
// say it.
func confirmerOn(in *os.File, w io.Writer) confirmer {
	if !app.IsTerminal(in) {
		return nil
	}
	return askOn(bufio.NewReader(in), w)
}

// askOn asks on w and reads the answer from r: yes only for "y" or "yes".
func askOn(r *bufio.Reader, w io.Writer) confirmer {
	return func(question string) (bool, error) {
		fmt.Fprintf(w, "%s [y/N] ", question)
		line, err := r.ReadString('\n')
		if err != nil && line == "" {
			return false, err
		}
		answer := strings.ToLower(strings.TrimSpace(line))
		return answer == "y" || answer == "yes", nil
	}
}

// exitCode is main's exit code for err, which it prints on stderr.
func exitCode(err error, stderr io.Writer) int {
	return config.ExitCode("beliefs", err, stderr, notFound()...)
}

// notFound are the errors that exit 3: what names nothing there. An unknown entity name
// is one, as an unknown id is.
func notFound() []error {
	return []error{memory.ErrNotFound, memory.ErrUnknownEntity}
}

// command is one subcommand.
type command struct {
	name, usage string
	groups      config.Group
	// args names the arguments the subcommand takes besides its flags (FILE), before
	// or after them; "" takes none.
	args string
	// flags registers the subcommand's flags; run runs it once they are parsed.
	flags func(fs *flag.FlagSet) func(ctx context.Context, env *env) error
}

func commands() []command {
	return append([]command{listCommand(), contextCommand(), askCommand(), scopesCommand(), episodesCommand(), historyCommand(), eventsCommand(), conflictsCommand(), resolveCommand(), revertCommand(), auditCommand(), addCommand(), correctCommand(), forgetCommand(), consolidateCommand(), curateCommand(), reembedCommand(), exportCommand(), importCommand()},
		slices.Concat(entitiesCommands(), keysCommands(), policyCommands(), webhooksCommands(), []command{mcpCommand()})...)
}

// run is runWith without a terminal to ask on, as in a script.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runWith(ctx, args, getenv, nil, stdout, stderr)
}

func runWith(ctx context.Context, args []string, getenv func(string) string, confirm confirmer, stdout, stderr io.Writer) error {
	cmds := commands()
	args = joinSubcommand(cmds, args) // keys create|list|revoke, entities merge
	usage := func() {
		fmt.Fprintln(stderr, "usage: beliefs COMMAND [flags]\n\ncommands:")
		for _, c := range cmds {
			fmt.Fprintf(stderr, "  %-10s %s\n", c.name, c.usage)
		}
		fmt.Fprintln(stderr, "\nbeliefs COMMAND -h shows a command's flags.")
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) == 0 {
			return config.Usagef("a command is required")
		}
		return nil
	}
	for _, c := range cmds {
		if c.name != args[0] {
			continue
		}
		fs := flag.NewFlagSet("beliefs "+c.name, flag.ContinueOnError)
		fs.SetOutput(stderr)
		cfg, err := config.Load(fs, c.groups, getenv)
		if err != nil {
			return config.Usage(err)
		}
		do := c.flags(fs)
		positional, err := parseArgs(fs, args[1:], c.args != "")
		if err != nil {
			return err // -h, or a UsageError
		}
		if err := cfg.Checked(c.groups); err != nil {
			return err
		}
		e := &env{cfg: cfg, stdout: stdout, stderr: stderr, confirm: confirm, args: positional}
		defer e.close()
		return app.Traced(ctx, "beliefs "+c.name, getenv, app.Logger(cfg, stderr), func(ctx context.Context, tr *tracing.Tracing) error {
			e.tracing = tr
			return do(ctx, e)
		})
	}
	usage()
	return config.Usagef("unknown command %q", args[0])
}

// parseArgs parses args into fs and returns the arguments that are not flags, which
// may come before, between or after them when the command takes any.
func parseArgs(fs *flag.FlagSet, args []string, takesArgs bool) ([]string, error) {
	var positional []string
	for {
		if err := config.ParseFlags(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		if !takesArgs {
			return nil, config.Usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
		}
		positional, args = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
}

// env is what a running subcommand uses; the store is opened on first use, so usage
// errors are reported without a database.
type env struct {
	cfg            *config.Config
	stdout, stderr io.Writer
	// args are the command's arguments besides its flags.
	args []string
	// pool is the database, store memory on it; both are opened on first use.
	pool  *pgxpool.Pool
	store *memory.Store
	// confirm asks before what cannot be undone; nil: --yes must say it.
	confirm confirmer
	// tracing traces the statements and model calls of the command (off: no-op).
	tracing *tracing.Tracing
}

// confirmed says whether what names an erasure the person wants: given --yes, or asked
// and answered yes at a terminal. Without a terminal and --yes, it is a usage error.
func (e *env) confirmed(what string, yes bool) (bool, error) {
	if yes {
		return true, nil
	}
	if e.confirm == nil {
		return false, config.Usagef("%s cannot be undone: add --yes to go ahead (nothing was erased)", what)
	}
	ok, err := e.confirm(what + " cannot be undone. Go ahead?")
	if err == nil && !ok {
		fmt.Fprintln(e.stdout, "nothing was erased")
	}
	return ok, err
}

func (e *env) open(ctx context.Context) (*memory.Store, error) {
	if e.store == nil {
		pool, err := app.OpenDB(ctx, e.cfg, 4, app.Logger(e.cfg, e.stderr), e.tracing.ConfigurePool)
		if err != nil {
			return nil, err
		}
		e.pool, e.store = pool, memory.NewStore(pool, app.MemoryConfig(e.cfg, 0))
	}
	return e.store, nil
}

// openScope checks --scope, then opens the store.
func (e *env) openScope(ctx context.Context, scope string) (*memory.Store, error) {
	if err := requireScope(scope); err != nil {
		return nil, err
	}
	return e.open(ctx)
}

// openModels opens the store and the configured chat and embedding models.
func (e *env) openModels(ctx context.Context) (store *memory.Store, chat, embed llm.Provider, err error) {
	if store, err = e.open(ctx); err != nil {
		return nil, nil, nil, err
	}
	if chat, embed, err = app.Providers(e.cfg); err != nil {
		return nil, nil, nil, err
	}
	return store, e.tracing.WrapProvider(chat), e.tracing.WrapProvider(embed), nil
}

// openPool is the database, for what is not memory's: API keys, River's jobs.
func (e *env) openPool(ctx context.Context) (*pgxpool.Pool, error) {
	if _, err := e.open(ctx); err != nil {
		return nil, err
	}
	return e.pool, nil
}

// operator carries out an operator's operations on the store, with the configured
// embedder when withEmbed (assertions, corrections and decisions are embedded).
func (e *env) operator(ctx context.Context, withEmbed bool) (*operator.Operator, error) {
	red, err := app.Redactor(e.cfg)
	if err != nil {
		return nil, err
	}
	if !withEmbed {
		store, err := e.open(ctx)
		if err != nil {
			return nil, err
		}
		return operator.New(operator.Config{Store: store, Redact: red}), nil
	}
	store, _, embed, err := e.openModels(ctx)
	if err != nil {
		return nil, err
	}
	return operator.New(operator.Config{Store: store, Embed: embed, EmbedModel: embed.EmbedModel(), Redact: red}), nil
}

// revise carries out an operator's revision with the configured embedder; its failure
// says what to do (revisionError).
func (e *env) revise(ctx context.Context, do func(*operator.Operator) (memory.Outcome, error)) (memory.Outcome, error) {
	ops, err := e.operator(ctx, true)
	if err != nil {
		return memory.Outcome{}, err
	}
	out, err := do(ops)
	if err != nil {
		return out, revisionError(err)
	}
	return out, nil
}

func (e *env) close() {
	if e.pool != nil {
		e.pool.Close()
	}
}

// parseOptionalTime is parseTime of a flag that may be left out: nil then.
//
//nolint:nilnil // a flag left out is no time, not an error
func parseOptionalTime(flagName, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := parseTime(flagName, s)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// parseTime reads RFC 3339 or a date (midnight UTC).
func parseTime(flagName, s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, config.Usagef("--%s %q is not an RFC 3339 time or a date like 2026-03-20", flagName, s)
}

func requireScope(scope string) error {
	if strings.TrimSpace(scope) == "" {
		return config.Usagef("--scope is required")
	}
	return checkInput(transcript.CheckScope("--scope", scope))
}

// checkInput is the shared rule's verdict on a flag as bad usage: the same rule, and the
// same limits, as the API, MCP and the web UI apply.
func checkInput(err error) error {
	if msg, ok := transcript.InputMessage(err); ok {
		return config.Usage(errors.New(msg))
	}
	return err
}
