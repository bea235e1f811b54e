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
       eval locomo --retrieval --data PATH [--conversations N] [--json]

Runs the LoCoMo benchmark (github.com/snap-research/locomo, data/locomo10.json) through
the real pipeline in a throwaway schema of DATABASE_URL: each conversation is a scope,
each session a dated transcript; after extraction and one consolidation pass per scope,
every question of categories 1 to 4 is answered with ask, and the configured model
judges each answer against the gold one (CORRECT or WRONG). Prints accuracy per
category and overall, tokens and seconds per question, chat calls per session, and the
run's cost: calls and tokens per session, context tokens per question, read and answer
latency, memory per conversation.

With --retrieval no chat model runs: each turn is stored as a belief of its speaker and
embedded with EMBED_MODEL, and each question asks the agent's read (context) for its
first 5, 10 and 24 beliefs, by vectors alone and fused with the words and entities of
the question; it prints recall@k of the question's evidence turns per category.`

// runLocomo is `eval locomo`.
func runLocomo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval locomo", locomoUsage, stderr)
	f := addBenchFlags(fs, "the LoCoMo file: locomo10.json of github.com/snap-research/locomo")
	conversations := fs.Int("conversations", 0, "run only the first N conversations (0: all)")
	questions := fs.Int("questions", 0, "ask only the first N questions of categories 1-4 of each conversation (0: all)")
	retrieval := fs.Bool("retrieval", false, "measure retrieval recall@5/10/24 of the evidence turns, vectors alone and fused; no chat model runs")
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
	if *retrieval {
		return runLocomoRetrieval(ctx, f, samples, *conversations, getenv, stdout, stderr)
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

// runLocomoRetrieval is `eval locomo --retrieval`.
func runLocomoRetrieval(ctx context.Context, f *benchFlags, samples []eval.LocomoSample, conversations int,
	getenv func(string) string, stdout, stderr io.Writer) error {
	logger, _, embed, err := f.st.models(getenv, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "eval: LoCoMo retrieval, %s (%s)\n", embed.EmbedModel(), embed.Name())
	res, err := eval.RunLocomoRetrieval(ctx, samples, eval.LocomoRetrievalConfig{DatabaseURL: f.st.cfg.DatabaseURL, Embed: embed,
		EmbedModel: embed.EmbedModel(), Conversations: conversations, Keep: *f.keep, Logger: logger, Progress: stderr})
	if err != nil {
		return err
	}
	if *f.asJSON {
		return eval.WriteJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "embedding model %s (%s)\n", embed.EmbedModel(), embed.Name())
	return res.WriteTable(stdout)
}
