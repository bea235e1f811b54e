package main

import (
	"errors"
	"flag"
	"io"
	"log/slog"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm"
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
		return nil, config.Usage(err)
	}
	wcfg, err := config.Load(flag.NewFlagSet("worker", flag.ContinueOnError), config.GroupWorker, getenv)
	if err != nil {
		return nil, config.Usage(err)
	}
	workers := fs.Int("workers", wcfg.Workers, workersUsage)
	if err := config.ParseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, config.Usage(err)
	}
	if fs.NArg() > 0 {
		return nil, config.Usagef("unexpected arguments: %v", fs.Args())
	}
	if err := cfg.Check(groups); err != nil {
		return nil, config.Usage(err)
	}
	s := &settings{cfg: cfg, worker: wcfg, workers: *workers, set: map[string]bool{}}
	fs.Visit(func(f *flag.Flag) { s.set[f.Name] = true })
	return s, nil
}

// models opens the configured model servers, and a logger at warn unless LOG_LEVEL or
// --log-level says otherwise: every extraction logs at info, too much beside the
// progress lines.
func (s *settings) models(getenv func(string) string, stderr io.Writer) (logger *slog.Logger, chat, embed llm.Provider, err error) {
	if getenv("LOG_LEVEL") == "" && !s.set["log-level"] {
		s.cfg.LogLevel = "warn"
	}
	logger = app.Logger(s.cfg, stderr)
	chat, embed, err = app.Providers(s.cfg)
	return logger, chat, embed, err
}

// pipeline is the run's pipeline, configured as the worker would be.
func (s *settings) pipeline(getenv func(string) string, chat, embed llm.Provider, k int, keep bool,
	logger *slog.Logger, stderr io.Writer) eval.Config {
	maxAttempts := eval.DefaultMaxAttempts
	if getenv("MAX_ATTEMPTS") != "" {
		maxAttempts = s.worker.MaxAttempts
	}
	floor := s.worker.ConfidenceFloor
	if floor == 0 {
		floor = -1 // as the worker: CONFIDENCE_FLOOR=0 stores everything
	}
	return eval.Config{
		DatabaseURL: s.cfg.DatabaseURL, Chat: chat, Embed: embed, EmbedModel: embed.EmbedModel(),
		Learning: s.worker.Examples > 0, Examples: s.worker.Examples, Workers: s.workers,
		MaxCandidates: s.worker.MaxCandidates, ConfidenceFloor: floor, MaxAttempts: maxAttempts,
		JobTimeout: s.worker.JobTimeout, ConsolidateThreshold: s.cfg.ConsolidateThreshold,
		ConsolidateMaxCluster: s.cfg.ConsolidateMaxCluster, K: k, Keep: keep, Logger: logger,
		Containment: app.MemoryConfig(s.cfg, 0).Containment,
		Progress:    prefixed{stderr},
	}
}
