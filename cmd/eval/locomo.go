package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/recall"
)

// locomoUsage describes `eval locomo`.
const locomoUsage = `usage: eval locomo --data PATH [--conversations N] [--questions N] [--json] [flags]

Runs the LoCoMo benchmark (github.com/snap-research/locomo, data/locomo10.json) through
the real pipeline in a throwaway schema of DATABASE_URL: each conversation is a scope,
each session a dated transcript; after extraction and one consolidation pass per scope,
every question of categories 1 to 4 is answered with ask, and the configured model
judges each answer against the gold one (CORRECT or WRONG). Prints accuracy per
category and overall, tokens and seconds per question, and chat calls per session.`

// runLocomo is `eval locomo`.
func runLocomo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval locomo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, locomoUsage+"\n\n")
		fs.PrintDefaults()
	}
	data := fs.String("data", "", "the LoCoMo file: locomo10.json of github.com/snap-research/locomo (required)")
	conversations := fs.Int("conversations", 0, "run only the first N conversations (0: all)")
	questions := fs.Int("questions", 0, "ask only the first N questions of categories 1-4 of each conversation (0: all)")
	asJSON := fs.Bool("json", false, "print the report as JSON, with every question, answer and verdict")
	verbose := fs.Bool("v", false, "list every question answered wrongly under the tables")
	keep := fs.Bool("keep", false, "keep the throwaway schema instead of dropping it, to inspect it")
	k := fs.Int("k", recall.DefaultK, "beliefs each question is answered from")
	st, err := parseSettings(fs, args, getenv, "extraction jobs run at once, and conversations questioned at once (env WORKERS)")
	if err != nil {
		return err
	}
	workers := &st.workers
	switch {
	case *data == "":
		return usagef("--data is required: the LoCoMo file, locomo10.json of github.com/snap-research/locomo")
	case *conversations < 0:
		return usagef("--conversations must be 0 (all) or more")
	case *questions < 0:
		return usagef("--questions must be 0 (all) or more")
	case *workers < 1:
		return usagef("--workers must be at least 1")
	case *k < 1 || *k > recall.MaxK:
		return usagef("--k must be within 1..%d", recall.MaxK)
	}
	samples, err := loadLocomo(*data)
	if err != nil {
		return usageError{err}
	}

	logger, chat, embed, err := st.models(getenv, stderr)
	if err != nil {
		return err
	}
	n := len(samples)
	if *conversations > 0 {
		n = min(n, *conversations)
	}
	fmt.Fprintf(stderr, "eval: LoCoMo, %d of %d conversations, %s (%s), learning %s\n", n, len(samples),
		chat.ChatModel(), chat.Name(), map[bool]string{true: "on", false: "off"}[st.worker.Examples > 0])
	res, err := eval.RunLocomo(ctx, samples, eval.LocomoConfig{
		Config:        st.pipeline(getenv, chat, embed, *k, *keep, logger, stderr),
		Conversations: *conversations,
		Questions:     *questions,
	})
	if err != nil {
		return err
	}
	if res.SchemaKept {
		fmt.Fprintf(stderr, "eval: schema %s kept; drop it with DROP SCHEMA %s CASCADE\n", res.Schema, res.Schema)
	}
	report := &eval.LocomoReport{Provider: chat.Name(), ChatModel: chat.ChatModel(), EmbedProvider: embed.Name(),
		EmbedModel: embed.EmbedModel(), JudgeModel: chat.ChatModel(), Data: *data, LocomoResult: *res}
	if *asJSON {
		return report.WriteJSON(stdout)
	}
	return report.WriteTable(stdout, *verbose)
}

// loadLocomo reads the LoCoMo file at path.
func loadLocomo(path string) ([]eval.LocomoSample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	defer f.Close()
	return eval.ParseLocomo(path, f)
}
