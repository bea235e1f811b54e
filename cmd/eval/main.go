// Command eval scores how well the configured LLM revises memory with credo's prompts.
// It sends a labeled scenario set (by default the one shipped in the binary) through
// the real pipeline (enqueue, extraction jobs, consolidation, recall) in a throwaway
// schema of DATABASE_URL, and prints per category the precision and recall of
// supersede, retract and keep decisions, current-state, history and question accuracy,
// LLM calls and tokens per episode, and extraction latency.
//
//	eval [--scenarios FILE] [--only CATEGORY|NAME,...] [--json] [-v]
//	     [--with-learning | --without-learning | --compare] [--workers N] [--k N] [--keep]
//	     [--gold | --inject KIND[:RATE],... | --perturb[=P,...]] [--seed N] [--verifier gold|yes|no]
//	     [--set shipped|heldout|both]
//
// --gold answers with the gold labels of the shipped scenarios (eval/gold.jsonl)
// instead of the configured chat model: every score is 1.0. --inject runs the labeled
// scenarios with the gold model making the mistakes KIND at RATE, and --perturb with
// its correct answers reworded, counting the correct revisions held (see inject.go);
// both report the shipped and the held-out set on their own lines (--set). --verifier
// is how the gold model answers the second opinion: as the labels (gold), always yes,
// always no.
//
// `eval locomo --data PATH [--conversations N] [--questions N] [--json]` runs the public
// LoCoMo benchmark instead: accuracy of recall's ask per question category, as judged
// by the configured model against the gold answers (see locomo.go).
// `eval longmemeval --data FILE [--types T,...] [--limit N] [--json]` runs LongMemEval,
// judged with its own prompts per question type (longmemeval.go), and `eval mab --data
// FILE [--split single-hop|multi-hop] [--limit N] [--json]` MemoryAgentBench's
// FactConsolidation, scored by substring exact match (mab.go). Every benchmark reports
// its cost beside its score, takes --keep and --run ID to go on with a kept run, and
// shows a progress bar on a terminal.
//
// The model is configured as for the worker (LLM_PROVIDER, OLLAMA_HOST or
// OPENAI_BASE_URL, CHAT_MODEL, EMBED_MODEL, ...). Exit codes: 0 scored (whatever the
// scores), 1 failed, 2 bad usage or a bad scenario file.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
)

func main() {
	app.Main("eval", func(ctx context.Context) error {
		return run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	})
}

const groups = config.GroupDB | config.GroupLLM | config.GroupConsolidate

// stringList is a repeatable flag of comma-separated values.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "locomo":
			return runLocomo(ctx, args[1:], getenv, stdout, stderr)
		case "longmemeval":
			return runLongMemEval(ctx, args[1:], getenv, stdout, stderr)
		case "mab":
			return runMAB(ctx, args[1:], getenv, stdout, stderr)
		case "calibrate":
			return runCalibrate(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: eval [flags]\n       eval locomo|longmemeval|mab --data FILE [flags]\n       eval calibrate [--json]\n\n"+
			"Scores revision decisions of the configured LLM on a labeled scenario set, in a throwaway schema of DATABASE_URL;\n"+
			"locomo, longmemeval and mab run those public benchmarks instead (eval BENCHMARK -h).")
		fs.PrintDefaults()
	}
	scenariosFile := fs.String("scenarios", "", "scenario file, JSON lines (default: the set shipped in the binary, "+eval.ShippedName+")")
	var only stringList
	fs.Var(&only, "only", "run only the scenarios of these categories or names (comma-separated, repeatable)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	verbose := fs.Bool("v", false, "list every failed check under the table")
	withLearning := fs.Bool("with-learning", true, "show extraction the scope's past revisions as worked examples")
	withoutLearning := fs.Bool("without-learning", false, "extract without worked examples")
	compare := fs.Bool("compare", false, "run twice, with and without learning, and report both side by side")
	keep := fs.Bool("keep", false, "keep the throwaway schema instead of dropping it, to inspect it")
	k := fs.Int("k", eval.DefaultK, "beliefs recall ranks per question")
	gold := fs.Bool("gold", false, "answer with the gold labels of the shipped scenarios instead of the chat model")
	var inject stringList
	fs.Var(&inject, "inject", "run the labeled scenarios with the gold model making these mistakes, KIND[:RATE] (RATE 1 when left out; "+
		"kinds: all, "+strings.Join(injectKindNames(), ", ")+"), with the containment guards on and off")
	var perturb perturbFlag
	fs.Var(&perturb, "perturb", "run the labeled scenarios with the gold model's correct answers reworded, each way in turn and all "+
		"together, with the containment guards on and off, and count the correct revisions held (alone: every way; or a list of "+
		strings.Join(perturbNames(), ", ")+")")
	seed := fs.Uint64("seed", 1, "with --inject or --perturb: draws which opportunities a RATE below 1 takes, which candidates, which wording")
	verifier := fs.String("verifier", string(eval.VerifierGold), "with --gold, --inject or --perturb: how the gold model answers the "+
		"second opinion: gold (as the labels), yes (every directive holds), no (none does)")
	setFlag := fs.String("set", "both", "with --inject or --perturb: the labeled scenario sets to run, shipped, heldout or both")
	st, err := parseSettings(fs, args, getenv, "extraction jobs run at once, and scopes consolidated at once (env WORKERS)")
	if err != nil {
		return err
	}
	wcfg, workers, set := st.worker, &st.workers, st.set
	switch {
	case *workers < 1:
		return config.Usagef("--workers must be at least 1")
	case *k < 1 || *k > 100:
		return config.Usagef("--k must be within 1..100")
	case *compare && (set["with-learning"] || set["without-learning"]):
		return config.Usagef("--compare runs both with and without learning; leave out --with-learning and --without-learning")
	case set["with-learning"] && set["without-learning"] && *withLearning == *withoutLearning:
		return config.Usagef("--with-learning and --without-learning contradict each other")
	case *gold && len(inject) > 0:
		return config.Usagef("--gold and --inject exclude each other: --inject runs the gold model already")
	case *gold && set["perturb"]:
		return config.Usagef("--gold and --perturb exclude each other: --perturb runs the gold model already")
	case len(inject) > 0 && set["perturb"]:
		return config.Usagef("--inject and --perturb are runs of their own; give one")
	case (len(inject) > 0 || set["perturb"]) && *compare:
		return config.Usagef("--inject and --perturb run with the guards on and off; leave out --compare")
	case set["seed"] && len(inject) == 0 && !set["perturb"]:
		return config.Usagef("--seed is for --inject and --perturb")
	case set["verifier"] && !*gold && len(inject) == 0 && !set["perturb"]:
		return config.Usagef("--verifier is for --gold, --inject and --perturb")
	case set["set"] && len(inject) == 0 && !set["perturb"]:
		return config.Usagef("--set is for --inject and --perturb")
	case set["set"] && *scenariosFile != "":
		return config.Usagef("--set chooses among the shipped sets; --scenarios runs its file alone")
	}
	injections, err := eval.ParseInjections(inject)
	if err != nil {
		return config.Usage(err)
	}
	perturbations, err := eval.ParsePerturbations(string(perturb))
	if err != nil {
		return config.Usage(err)
	}
	verify, err := eval.ParseVerifier(*verifier)
	if err != nil {
		return config.Usage(err)
	}
	sets, err := chooseSets(*setFlag)
	if err != nil {
		return config.Usage(err)
	}
	learning := *withLearning && !*withoutLearning
	if (learning || *compare) && wcfg.Examples == 0 {
		return config.Usagef("EXAMPLES=0 turns learning off: use --without-learning, or set EXAMPLES")
	}

	if len(injections) > 0 || len(perturbations) > 0 {
		name, labeled, err := labeledSets(*scenariosFile, sets, only)
		if err != nil {
			return err
		}
		logger, provider, embed, err := st.models(getenv, stderr)
		if err != nil {
			return err
		}
		base := st.pipeline(getenv, provider, embed, *k, *keep, logger, stderr)
		base.Learning = learning
		if len(perturbations) > 0 {
			return runPerturb(ctx, labeled, name, eval.PerturbConfig{Config: base, Perturbations: perturbations, Seed: *seed, Verifier: verify},
				embed, *asJSON, *verbose, stdout, stderr)
		}
		return runInject(ctx, labeled, name, eval.InjectConfig{Config: base, Injections: injections, Seed: *seed, Verifier: verify},
			embed, *asJSON, *verbose, stdout, stderr)
	}

	name, scenarios, err := loadScenarios(*scenariosFile)
	if err != nil {
		return config.Usage(err)
	}
	if scenarios, err = eval.Filter(scenarios, only); err != nil {
		return config.Usage(err)
	}
	var labels []eval.Labels
	if *gold {
		if labels, err = goldLabels(scenarios); err != nil {
			return err
		}
	}

	logger, provider, embed, err := st.models(getenv, stderr)
	if err != nil {
		return err
	}
	var chat chatModel = provider
	if *gold {
		g, err := eval.NewGoldWith(scenarios, labels, eval.GoldOptions{Verifier: verify})
		if err != nil {
			return err
		}
		chat = goldChat{g}
	}
	runs := []bool{learning}
	if *compare {
		runs = []bool{true, false}
	}
	report := &eval.Report{Provider: chat.Name(), ChatModel: chat.ChatModel(), EmbedProvider: embed.Name(),
		EmbedModel: embed.EmbedModel(), Scenarios: name, K: *k}
	base := st.pipeline(getenv, provider, embed, *k, *keep, logger, stderr)
	base.Chat = chat
	if err := runAll(ctx, scenarios, runs, base, report, stderr); err != nil {
		return err
	}
	if *asJSON {
		return report.WriteJSON(stdout)
	}
	return report.WriteTable(stdout, *verbose)
}

// runAll runs the scenarios once per learning setting in runs, each in base's
// configuration, and adds the results to report.
func runAll(ctx context.Context, scenarios []eval.Scenario, runs []bool, base eval.Config, report *eval.Report, stderr io.Writer) error {
	episodes := 0
	for _, s := range scenarios {
		episodes += len(s.Transcripts)
	}
	for _, learning := range runs {
		fmt.Fprintf(stderr, "eval: %d scenarios, %d episodes, %s (%s), learning %s\n", len(scenarios), episodes,
			report.ChatModel, report.Provider, map[bool]string{true: "on", false: "off"}[learning])
		cfg := base
		cfg.Learning = learning
		res, err := eval.Run(ctx, scenarios, cfg)
		if err != nil {
			return err
		}
		if res.SchemaKept {
			fmt.Fprintf(stderr, "eval: schema %s kept; drop it with DROP SCHEMA %s CASCADE\n", res.Schema, res.Schema)
		}
		report.Runs = append(report.Runs, res)
	}
	return nil
}

func loadScenarios(path string) (string, []eval.Scenario, error) {
	if path == "" {
		ss, err := eval.Shipped()
		return eval.ShippedName, ss, err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	ss, err := eval.Load(path, f)
	return path, ss, err
}

// prefixed writes progress lines as "eval: ...".
type prefixed struct{ w io.Writer }

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, "eval: "); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}
