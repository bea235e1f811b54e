package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
)

// calibrateUsage describes `eval calibrate`.
const calibrateUsage = `usage: eval calibrate [--json]

Embeds the gold labels' revisions with the configured EMBED_MODEL: each correct
supersession's new statement (a pure retraction's quote) against its target, and the
same against the other current beliefs of another slot that share no word with it (what
a wrong candidate index revises). Prints both distributions and the
REVISION_SIMILARITY_FLOOR it would pick for the containment guards: just above 99% of
the wrong pairs. Makes embedding calls only, no chat call, and writes nothing.`

// runCalibrate is `eval calibrate`.
func runCalibrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval calibrate", calibrateUsage, stderr)
	// The embedding model's settings alone: calibrating needs no database.
	cfg, err := config.Load(fs, config.GroupLLM, getenv)
	if err != nil {
		return config.Usage(err)
	}
	asJSON := fs.Bool("json", false, "print the calibration as JSON")
	if err := config.ParseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return config.Usage(err)
	}
	if fs.NArg() > 0 {
		return config.Usagef("unexpected arguments: %v", fs.Args())
	}
	if err := cfg.Check(config.GroupLLM); err != nil {
		return config.Usage(err)
	}
	_, embed, err := app.Providers(cfg)
	if err != nil {
		return config.Usage(err)
	}
	labels, err := eval.ShippedLabels()
	if err != nil {
		return err
	}
	scenarios, err := eval.Shipped()
	if err != nil {
		return err
	}
	c, err := eval.Calibrate(ctx, embed, embed.EmbedModel(), scenarios, labels)
	if err != nil {
		return runError(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	return c.WriteTable(stdout)
}
