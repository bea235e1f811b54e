package main

import (
	"context"
	"fmt"
	"io"

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

// runInject runs eval --inject and prints its report.
func runInject(ctx context.Context, scenarios []eval.Scenario, name string, cfg eval.InjectConfig, embed llm.Provider,
	asJSON, verbose bool, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "eval: %d scenarios, the gold model making %d kinds of mistake, guards on and off\n", len(scenarios), len(cfg.Injections))
	rep, err := eval.RunInject(ctx, scenarios, cfg)
	if err != nil {
		return err
	}
	rep.EmbedProvider, rep.EmbedModel, rep.Scenarios = embed.Name(), embed.EmbedModel(), name
	if asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout, verbose)
}
