package main

import (
	"context"
	"fmt"
	"io"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
)

// longMemEvalUsage describes `eval longmemeval`.
const longMemEvalUsage = `usage: eval longmemeval --data FILE [--types T,...] [--limit N] [--json] [flags]

Runs LongMemEval (github.com/xiaowu0162/LongMemEval: longmemeval_s.json, _m or _oracle)
through the real pipeline in a throwaway schema of DATABASE_URL: each question's history
is a scope of its own, each session a transcript dated by its haystack_date; after
extraction and one consolidation pass per scope, the question is answered with ask as
of its question_date, and the configured model judges the answer with LongMemEval's own
prompt for its type. Prints accuracy per type (knowledge-update first), overall,
task-averaged and on abstention questions, and the run's cost.`

// runLongMemEval is `eval longmemeval`.
func runLongMemEval(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval longmemeval", longMemEvalUsage, stderr)
	f := addBenchFlags(fs, "the LongMemEval file: longmemeval_s.json, longmemeval_m.json or longmemeval_oracle.json")
	var types stringList
	fs.Var(&types, "types", "ask only the questions of these types (comma-separated: knowledge-update, single-session-user, ...)")
	limit := fs.Int("limit", 0, "ask only the first N questions (of the types asked; 0: all)")
	if err := f.parse(fs, args, getenv, "a LongMemEval file, longmemeval_s.json of github.com/xiaowu0162/LongMemEval's data"); err != nil {
		return err
	}
	if *limit < 0 {
		return config.Usagef("--limit must be 0 (all) or more")
	}
	questions, err := readData(f, func(name string, r io.Reader) ([]eval.LongMemEvalQuestion, error) {
		return eval.ParseLongMemEval(name, r, eval.LongMemEvalFilter{Types: types, Limit: *limit})
	})
	if err != nil {
		return err
	}
	sessions, longest := 0, 0
	for _, q := range questions {
		sessions += len(q.Sessions)
		for _, s := range q.Sessions {
			longest = max(longest, s.Tokens())
		}
	}
	// A session longer than the model's window is extracted in segments, each a chat
	// call of its own: the cost table's chat_calls_per_episode says how many.
	fmt.Fprintf(stderr, "eval: the longest session is about %d tokens; one longer than the model's window is extracted in "+
		"segments (CHAT/EP in the cost table)\n", longest)
	cfg, models, err := f.pipeline(getenv, stderr, fmt.Sprintf("LongMemEval, %d questions over %d sessions", len(questions), sessions))
	if err != nil {
		return err
	}
	res, err := eval.RunLongMemEval(ctx, questions, eval.LongMemEvalConfig{Config: cfg})
	if err != nil {
		return runError(err)
	}
	models.JudgeModel = models.ChatModel
	return f.write(stdout, stderr, res.BenchRun, &eval.LongMemEvalReport{BenchModels: models, LongMemEvalResult: *res})
}
