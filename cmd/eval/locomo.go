package main

import (
	"context"
	"fmt"
	"io"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
)

// locomoUsage describes `eval locomo`.
const locomoUsage = `usage: eval locomo --data PATH [--conversations N] [--questions N] [--json] [flags]

Runs the LoCoMo benchmark (github.com/snap-research/locomo, data/locomo10.json) through
the real pipeline in a throwaway schema of DATABASE_URL: each conversation is a scope,
each session a dated transcript; after extraction and one consolidation pass per scope,
every question of categories 1 to 4 is answered with ask, and the configured model
judges each answer against the gold one (CORRECT or WRONG). Prints accuracy per
category and overall, tokens and seconds per question, chat calls per session, and the
run's cost: calls and tokens per session, context tokens per question, read and answer
latency, memory per conversation.`

// runLocomo is `eval locomo`.
func runLocomo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval locomo", locomoUsage, stderr)
	f := addBenchFlags(fs, "the LoCoMo file: locomo10.json of github.com/snap-research/locomo")
	conversations := fs.Int("conversations", 0, "run only the first N conversations (0: all)")
	questions := fs.Int("questions", 0, "ask only the first N questions of categories 1-4 of each conversation (0: all)")
	if err := f.parse(fs, args, getenv, "the LoCoMo file, locomo10.json of github.com/snap-research/locomo"); err != nil {
		return err
	}
	switch {
	case *conversations < 0:
		return config.Usagef("--conversations must be 0 (all) or more")
	case *questions < 0:
		return config.Usagef("--questions must be 0 (all) or more")
	}
	samples, err := readData(f, eval.ParseLocomo)
	if err != nil {
		return err
	}
	n := len(samples)
	if *conversations > 0 {
		n = min(n, *conversations)
	}
	cfg, models, err := f.pipeline(getenv, stderr, fmt.Sprintf("LoCoMo, %d of %d conversations", n, len(samples)))
	if err != nil {
		return err
	}
	res, err := eval.RunLocomo(ctx, samples, eval.LocomoConfig{Config: cfg, Conversations: *conversations, Questions: *questions})
	if err != nil {
		return runError(err)
	}
	models.JudgeModel = models.ChatModel
	return f.write(stdout, stderr, res.BenchRun, &eval.LocomoReport{BenchModels: models, LocomoResult: *res})
}
