package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm"
)

// chatModel is what the report names of the model it evaluates.
type chatModel interface {
	llm.Chatter
	Name() string
	ChatModel() string
}

// goldChat is the gold model as the report names it.
type goldChat struct{ *eval.Gold }

func (goldChat) Name() string      { return eval.GoldModel }
func (goldChat) ChatModel() string { return eval.GoldModel }

func injectKindNames() []string {
	names := make([]string, len(eval.InjectKinds))
	for i, k := range eval.InjectKinds {
		names[i] = string(k)
	}
	return names
}

// goldLabels are the shipped gold labels, which must answer every scenario of the run:
// --gold and --inject run the labeled scenarios only.
func goldLabels(scenarios []eval.Scenario) ([]eval.Labels, error) {
	labels, err := eval.ShippedLabels()
	if err != nil {
		return nil, err
	}
	if err := eval.CheckLabels(scenarios, labels); err != nil {
		return nil, config.Usage(fmt.Errorf("--gold and --inject run the scenarios %s labels (%w)", eval.LabelsName, err))
	}
	return labels, nil
}

// perturbFlag is --perturb: alone it is "true" (every perturbation), or a list.
type perturbFlag string

func (p *perturbFlag) String() string     { return string(*p) }
func (p *perturbFlag) Set(v string) error { *p = perturbFlag(v); return nil }
func (p *perturbFlag) IsBoolFlag() bool   { return true }

func perturbNames() []string {
	names := make([]string, len(eval.Perturbations))
	for i, p := range eval.Perturbations {
		names[i] = string(p)
	}
	return names
}

// chooseSets reads --set.
func chooseSets(v string) ([]string, error) {
	switch v {
	case "both":
		return []string{eval.SetShipped, eval.SetHeldOut}, nil
	case eval.SetShipped, eval.SetHeldOut:
		return []string{v}, nil
	}
	return nil, fmt.Errorf("--set %s: not shipped, heldout or both", v)
}

// labeledSets are the labeled scenario sets --inject and --perturb run, and the name of
// where they come from: the file --scenarios names alone (the shipped labels must
// answer it), or the sets --set chooses. --only keeps, of each set, what it selects;
// each of its entries must select something in one of them.
func labeledSets(file string, names, only []string) (string, []eval.Set, error) {
	if file != "" {
		name, scenarios, err := loadScenarios(file)
		if err != nil {
			return "", nil, config.Usage(err)
		}
		if scenarios, err = eval.Filter(scenarios, only); err != nil {
			return "", nil, config.Usage(err)
		}
		labels, err := goldLabels(scenarios)
		if err != nil {
			return "", nil, err
		}
		return name, []eval.Set{{Name: name, Scenarios: scenarios, Labels: labels}}, nil
	}
	var (
		sets  []eval.Set
		files []string
	)
	for _, n := range names {
		set := eval.Set{Name: n}
		var err error
		switch n {
		case eval.SetShipped:
			set.Scenarios, err = eval.Shipped()
			if err == nil {
				set.Labels, err = eval.ShippedLabels()
			}
			files = append(files, eval.ShippedName)
		case eval.SetHeldOut:
			set.Scenarios, set.Labels, err = eval.HeldOut()
			files = append(files, eval.HeldOutName)
		}
		if err != nil {
			return "", nil, err
		}
		sets = append(sets, set)
	}
	sets, err := filterSets(sets, only)
	return strings.Join(files, ", "), sets, err
}

// filterSets keeps, of each set, the scenarios whose category or name is in only, and
// the sets left with some.
func filterSets(sets []eval.Set, only []string) ([]eval.Set, error) {
	if len(only) == 0 {
		return sets, nil
	}
	used := map[string]bool{}
	var out []eval.Set
	for _, s := range sets {
		var kept []eval.Scenario
		for _, sc := range s.Scenarios {
			if slices.Contains(only, sc.Category) || slices.Contains(only, sc.Name) {
				kept = append(kept, sc)
				used[sc.Category], used[sc.Name] = true, true
			}
		}
		if len(kept) > 0 {
			s.Scenarios = kept
			out = append(out, s)
		}
	}
	for _, o := range only {
		if !used[o] {
			return nil, config.Usagef("--only %s: no scenario has that category or name", o)
		}
	}
	return out, nil
}

// runInject runs eval --inject and prints its report.
func runInject(ctx context.Context, sets []eval.Set, name string, cfg eval.InjectConfig, embed llm.Provider,
	asJSON, verbose bool, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "eval: %s, the gold model making %d kinds of mistake, guards on and off, second opinion %s\n", setSizes(sets),
		len(cfg.Injections), cfg.Verifier)
	rep, err := eval.RunInject(ctx, sets, cfg)
	if err != nil {
		return err
	}
	rep.EmbedProvider, rep.EmbedModel, rep.Scenarios = embed.Name(), embed.EmbedModel(), name
	if asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout, verbose)
}

// runPerturb runs eval --perturb and prints its report.
func runPerturb(ctx context.Context, sets []eval.Set, name string, cfg eval.PerturbConfig, embed llm.Provider,
	asJSON, verbose bool, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "eval: %s, the gold model's correct answers perturbed %d ways, guards on and off, second opinion %s\n",
		setSizes(sets), len(cfg.Perturbations), cfg.Verifier)
	rep, err := eval.RunPerturb(ctx, sets, cfg)
	if err != nil {
		return err
	}
	rep.EmbedProvider, rep.EmbedModel, rep.Scenarios = embed.Name(), embed.EmbedModel(), name
	if asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout, verbose)
}

// setSizes says how many scenarios each set has: "3 scenarios shipped, 2 heldout".
func setSizes(sets []eval.Set) string {
	parts := make([]string, len(sets))
	for i, s := range sets {
		parts[i] = fmt.Sprintf("%d %s", len(s.Scenarios), s.Name)
		if i == 0 {
			parts[i] = fmt.Sprintf("%d scenarios %s", len(s.Scenarios), s.Name)
		}
	}
	return strings.Join(parts, ", ")
}
