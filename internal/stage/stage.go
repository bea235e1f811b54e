// Package stage starts credo's pipeline stages (extraction, consolidation, recall) one
// way: a config's defaults, then its validation (River's withDefaults and validate),
// then the prompts.
package stage

import "github.com/credohq/credo/prompts"

// Setup returns cfg with its defaults once they validate, and the prompts: given, or
// parsed anew when given is nil. withDefaults and validate are the config's own methods
// (Config.withDefaults, Config.validate), which stay unexported in their package.
func Setup[C any](cfg C, withDefaults func(C) C, validate func(C) error, given *prompts.Prompts) (C, *prompts.Prompts, error) {
	cfg = withDefaults(cfg)
	if err := validate(cfg); err != nil {
		return cfg, nil, err
	}
	if given != nil {
		return cfg, given, nil
	}
	p, err := prompts.New()
	return cfg, p, err
}
