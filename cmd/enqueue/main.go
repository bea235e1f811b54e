// Command enqueue validates transcripts, stores them as episodes and makes sure each
// scope with a new episode has its extraction job.
//
//	enqueue FILE...   (- reads standard input; JSON object, JSON array or JSONL)
//
// Every record of every file is checked before anything is inserted: on bad input
// enqueue names the file, record and field, exits 2 and enqueues nothing. Exit codes:
// 0 done, 1 failed, 2 bad usage, input or configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/transcript"
)

func main() {
	app.Main("enqueue", func(ctx context.Context) error {
		return run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	})
}

// errNoFiles is bad usage that prints the usage, and nothing else.
var errNoFiles = &config.UsageError{Err: errors.New("no file given"), Printed: true}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("enqueue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: enqueue [flags] FILE...   (- for standard input)")
		fs.PrintDefaults()
	}
	cfg, err := config.Load(fs, config.GroupDB|config.GroupJobs, getenv)
	if err != nil {
		return config.Usage(err)
	}
	if err := config.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errNoFiles
	}
	if err := cfg.Checked(config.GroupDB | config.GroupJobs); err != nil {
		return err
	}

	now := time.Now()
	var all []transcript.Transcript
	var problems []error
	for _, name := range fs.Args() {
		ts, err := parseFile(name, stdin, now)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		all = append(all, ts...)
	}
	if len(problems) > 0 {
		return config.Usagef("nothing enqueued:\n%w", errors.Join(problems...))
	}

	logger := app.Logger(cfg, stderr)
	return app.Traced(ctx, "enqueue", getenv, logger, func(ctx context.Context, tr *tracing.Tracing) error {
		return enqueue(ctx, cfg, tr, logger, all, now, stdout)
	})
}

// enqueue stores the transcripts and inserts their jobs, in one transaction.
func enqueue(ctx context.Context, cfg *config.Config, tr *tracing.Tracing, logger *slog.Logger, all []transcript.Transcript,
	now time.Time, stdout io.Writer) error {
	pool, err := app.OpenDB(ctx, cfg, 4, logger, tr.ConfigurePool)
	if err != nil {
		return err
	}
	defer pool.Close()
	// An insert-only River client: it has no queues and works no job. Its jobs get the
	// worker's MAX_ATTEMPTS, not River's default of 25 (weeks of retries), and carry the
	// command's trace.
	jobs, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: logger, MaxAttempts: cfg.MaxAttempts,
		Middleware: tr.RiverMiddleware()})
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	red, err := app.Redactor(cfg)
	if err != nil {
		return err
	}
	var res *extract.EnqueueResult
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		res, err = extract.Enqueue(ctx, tx, jobs, all, now, red)
		return err
	})
	if err != nil {
		return fmt.Errorf("nothing enqueued: %w", err)
	}
	fmt.Fprintf(stdout, "enqueued %d, duplicates %d", res.Enqueued, res.Duplicates)
	if n := res.Redacted.Total(); n > 0 {
		// Counts only: the values are gone.
		fmt.Fprintf(stdout, ", redacted %d (%s)", n, res.Redacted)
	}
	fmt.Fprintln(stdout)
	return nil
}

func parseFile(name string, stdin io.Reader, now time.Time) ([]transcript.Transcript, error) {
	if name == "-" {
		return transcript.Parse(name, stdin, now, transcript.DefaultLimits())
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return transcript.Parse(name, f, now, transcript.DefaultLimits())
}
