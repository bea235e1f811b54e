package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/recall"
)

// benchFlags are the flags every benchmark command (locomo, longmemeval, mab) shares.
type benchFlags struct {
	data    *string
	asJSON  *bool
	verbose *bool
	keep    *bool
	run     *string
	k       *int
	st      *settings
}

// newFlagSet is a benchmark command's flag set: -h prints usage, then the flags.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage+"\n\n")
		fs.PrintDefaults()
	}
	return fs
}

// addBenchFlags defines the shared flags on fs; dataUsage says which file --data is.
func addBenchFlags(fs *flag.FlagSet, dataUsage string) *benchFlags {
	return &benchFlags{
		data:    fs.String("data", "", dataUsage+" (required)"),
		asJSON:  fs.Bool("json", false, "print the report as JSON, with every question, answer and verdict"),
		verbose: fs.Bool("v", false, "list every question answered wrongly under the tables"),
		keep:    fs.Bool("keep", false, "keep the throwaway schema instead of dropping it: to inspect it, or to go on with it (--run)"),
		run:     fs.String("run", "", "go on with the run of this id, whose schema an interrupted or --keep run left: what it extracted is not extracted again"),
		k:       fs.Int("k", recall.DefaultK, "beliefs each question is answered from"),
	}
}

// parse parses args into fs (the shared flags, the settings and the command's own) and
// checks the shared ones; dataHint says where the file comes from.
func (f *benchFlags) parse(fs *flag.FlagSet, args []string, getenv func(string) string, dataHint string) error {
	st, err := parseSettings(fs, args, getenv, "extraction jobs run at once, and conversations questioned at once (env WORKERS)")
	if err != nil {
		return err
	}
	f.st = st
	switch {
	case *f.data == "":
		return config.Usagef("--data is required: %s", dataHint)
	case st.workers < 1:
		return config.Usagef("--workers must be at least 1")
	case *f.k < 1 || *f.k > recall.MaxK:
		return config.Usagef("--k must be within 1..%d", recall.MaxK)
	}
	return nil
}

// open opens the file --data names.
func (f *benchFlags) open() (*os.File, error) {
	r, err := os.Open(*f.data)
	if err != nil {
		return nil, config.Usagef("--data: %w", err)
	}
	return r, nil
}

// readData parses the --data file with parse (given its name); a file that does not
// parse is bad usage.
func readData[T any](f *benchFlags, parse func(name string, r io.Reader) (T, error)) (T, error) {
	r, err := f.open()
	if err != nil {
		var zero T
		return zero, err
	}
	got, err := parse(*f.data, r)
	r.Close()
	if err != nil {
		return got, config.Usage(err)
	}
	return got, nil
}

// pipeline opens the models and returns the run's pipeline and what the report says
// of the models; title names the run on stderr.
func (f *benchFlags) pipeline(getenv func(string) string, stderr io.Writer, title string) (eval.Config, eval.BenchModels, error) {
	logger, chat, embed, err := f.st.models(getenv, stderr)
	if err != nil {
		return eval.Config{}, eval.BenchModels{}, err
	}
	fmt.Fprintf(stderr, "eval: %s, %s (%s), learning %s\n", title, chat.ChatModel(), chat.Name(),
		map[bool]string{true: "on", false: "off"}[f.st.worker.Examples > 0])
	cfg := f.st.pipeline(getenv, chat, embed, *f.k, *f.keep, logger, stderr)
	cfg.RunID = *f.run
	if app.IsTerminal(stderr) {
		cfg.Bar = stderr
	}
	models := eval.BenchModels{Provider: chat.Name(), ChatModel: chat.ChatModel(), EmbedProvider: embed.Name(),
		EmbedModel: embed.EmbedModel(), Data: *f.data}
	return cfg, models, nil
}

// report is a benchmark's report.
type report interface {
	WriteTable(w io.Writer, verbose bool) error
}

// write tells where the kept schema is, and prints r as --json asks.
func (f *benchFlags) write(stdout, stderr io.Writer, run eval.BenchRun, r report) error {
	if run.SchemaKept {
		fmt.Fprintf(stderr, "eval: schema %s kept; go on with --run %s, or drop it with DROP SCHEMA %s CASCADE\n",
			run.Schema, run.RunID, run.Schema)
	}
	if *f.asJSON {
		return eval.WriteJSON(stdout, r)
	}
	return r.WriteTable(stdout, *f.verbose)
}

// runError is a run's error, bad usage (exit code 2) when --run named no kept run.
func runError(err error) error {
	if _, ok := errors.AsType[*eval.RunIDError](err); ok {
		return config.Usage(err)
	}
	return err
}
