package main

import (
	"errors"
	"flag"

	"github.com/credohq/credo/internal/config"
)

// settings are what both eval runs read: their configuration, the worker's settings
// that shape extraction, --workers, and which flags were given.
type settings struct {
	cfg, worker *config.Config
	workers     int
	set         map[string]bool
}

// parseSettings loads the configuration into fs, parses args and checks them. The
// worker's settings that shape extraction (MAX_CANDIDATES, EXAMPLES, CONFIDENCE_FLOOR,
// JOB_TIMEOUT, WORKERS) apply as in the worker, from the environment; of their flags
// only --workers is the eval's.
func parseSettings(fs *flag.FlagSet, args []string, getenv func(string) string, workersUsage string) (*settings, error) {
	cfg, err := config.Load(fs, groups, getenv)
	if err != nil {
		return nil, usageError{err}
	}
	wcfg, err := config.Load(flag.NewFlagSet("worker", flag.ContinueOnError), config.GroupWorker, getenv)
	if err != nil {
		return nil, usageError{err}
	}
	workers := fs.Int("workers", wcfg.Workers, workersUsage)
	if err := config.ParseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments: %v", fs.Args())
	}
	if err := cfg.Check(groups); err != nil {
		return nil, usageError{err}
	}
	s := &settings{cfg: cfg, worker: wcfg, workers: *workers, set: map[string]bool{}}
	fs.Visit(func(f *flag.Flag) { s.set[f.Name] = true })
	return s, nil
}
