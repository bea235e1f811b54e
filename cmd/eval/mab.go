package main

import (
	"context"
	"fmt"
	"io"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
)

// mabUsage describes `eval mab`.
const mabUsage = `usage: eval mab --data FILE [--split single-hop|multi-hop] [--limit N] [--json] [flags]

Runs MemoryAgentBench's FactConsolidation (github.com/HUST-AI-HYZ/MemoryAgentBench; the
Conflict_Resolution split of the ai-hyz/MemoryAgentBench dataset, as JSON or JSON lines)
through the real pipeline in a throwaway schema of DATABASE_URL: each row is a scope,
its numbered facts episodes of --facts-per-episode in their order, each fact dated by its
number; after extraction and one consolidation pass per scope, each question is
answered with ask and matched against the acceptable answers as the benchmark does
(substring exact match). Prints accuracy per split and overall, and the run's cost.`

// runMAB is `eval mab`.
func runMAB(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval mab", mabUsage, stderr)
	f := addBenchFlags(fs, "the FactConsolidation rows: MemoryAgentBench's Conflict_Resolution split as JSON or JSON lines")
	split := fs.String("split", "", "run only this split: single-hop or multi-hop (default: both)")
	limit := fs.Int("limit", 0, "ask only the first N questions of each row (0: all)")
	perEpisode := fs.Int("facts-per-episode", eval.DefaultMABFactsPerEpisode, "facts in one episode, in their order")
	if err := f.parse(fs, args, getenv, "MemoryAgentBench's Conflict_Resolution split (ai-hyz/MemoryAgentBench) as JSON lines"); err != nil {
		return err
	}
	switch {
	case *limit < 0:
		return config.Usagef("--limit must be 0 (all) or more")
	case *perEpisode < 1 || *perEpisode > 200:
		return config.Usagef("--facts-per-episode must be within 1..200")
	}
	rows, err := readData(f, func(name string, r io.Reader) ([]eval.MABRow, error) {
		return eval.ParseMAB(name, r, eval.MABFilter{Split: *split, Limit: *limit})
	})
	if err != nil {
		return err
	}
	facts, questions := 0, 0
	for _, row := range rows {
		facts += len(row.Facts)
		questions += len(row.Questions)
	}
	cfg, models, err := f.pipeline(getenv, stderr, fmt.Sprintf("MemoryAgentBench FactConsolidation, %d rows, %d facts, %d questions",
		len(rows), facts, questions))
	if err != nil {
		return err
	}
	res, err := eval.RunMAB(ctx, rows, eval.MABConfig{Config: cfg, FactsPerEpisode: *perEpisode})
	if err != nil {
		return runError(err)
	}
	return f.write(stdout, stderr, res.BenchRun, &eval.MABReport{BenchModels: models, MABResult: *res})
}
