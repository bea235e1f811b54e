// Package app wires credo's commands: logging, the database and the LLM providers.
package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/migrations"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/webhook"
)

// Logger logs to w in the configured format and level.
func Logger(cfg *config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// OpenDB connects to DATABASE_URL and applies pending migrations (River's and credo's;
// on Citus, it distributes the tables too). Each of configure adjusts the pool's
// configuration first (tracing.Tracing.ConfigurePool traces its statements).
func OpenDB(ctx context.Context, cfg *config.Config, maxConns int32, logger *slog.Logger, configure ...func(*pgxpool.Config)) (*pgxpool.Pool, error) {
	pc, err := config.ParseDatabaseURL(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if maxConns > 0 {
		pc.MaxConns = maxConns
	}
	for _, c := range configure {
		c(pc)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, connectError(pc, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, connectError(pc, err)
	}
	if err := migrations.MigrateWithConfig(ctx, pool, &migrations.Config{Logger: logger, ShardCount: cfg.CitusShardCount}); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// MemoryConfig is the store's configuration from cfg: what every command that revises
// memory (the worker, beliefs, eval) passes to memory.NewStore. confidenceFloor is the
// worker's CONFIDENCE_FLOOR where it applies (0: the default). Every change is written
// to the change feed, and its webhook deliveries queued, in the same transaction.
func MemoryConfig(cfg *config.Config, confidenceFloor float64) *memory.Config {
	return &memory.Config{ConfidenceFloor: confidenceFloor, ExactSearchLimit: cfg.ExactSearchLimit,
		Containment: memory.Containment{SimilarityFloor: cfg.RevisionSimilarityFloor, MaxRevisions: cfg.MaxRevisionsPerEpisode,
			MaxRevisionsPerDay: cfg.MaxRevisionsPerDay},
		Announcer: changes.NewLog(changes.Config{Followers: []changes.Follower{webhook.NewDispatcher()}})}
}

// Redactor is the deployment's redactor: the kinds of REDACT, or every kind when the
// command did not read it.
func Redactor(cfg *config.Config) (*redact.Redactor, error) {
	if cfg.Redact == nil {
		return redact.Default(), nil
	}
	return redact.New(cfg.Redact)
}

// Providers returns the chat and embedding providers of cfg.
func Providers(cfg *config.Config) (chat, embed llm.Provider, err error) {
	chat, err = provider(cfg, cfg.LLMProvider)
	if err != nil {
		return nil, nil, err
	}
	embed = chat
	if cfg.EmbedProvider != cfg.LLMProvider {
		if embed, err = provider(cfg, cfg.EmbedProvider); err != nil {
			return nil, nil, err
		}
	}
	if cfg.EmbedDim > 0 {
		embed = &dimChecked{Provider: embed, dim: cfg.EmbedDim}
	}
	return chat, embed, nil
}

func provider(cfg *config.Config, name string) (llm.Provider, error) {
	c := llm.Config{APIKey: cfg.OpenAIAPIKey, ChatModel: cfg.ChatModel, EmbedModel: cfg.EmbedModel, Timeout: cfg.LLMTimeout,
		Context: cfg.ModelContext, EmbedContext: cfg.EmbedContext}
	switch name {
	case llm.ProviderOpenAI:
		c.BaseURL = cfg.OpenAIBaseURL
		return llm.NewOpenAI(c)
	case llm.ProviderOllama:
		c.BaseURL = cfg.OllamaHost
		return llm.NewOllama(c)
	}
	return nil, fmt.Errorf("LLM_PROVIDER: unknown provider %q", name)
}

// dimChecked refuses vectors of another dimension than EMBED_DIM, so a misconfigured
// model fails loudly instead of filling memory with vectors nothing can be compared to.
type dimChecked struct {
	llm.Provider
	dim int
}

func (d *dimChecked) Embed(ctx context.Context, inputs []string) (llm.EmbedResponse, error) {
	res, err := d.Provider.Embed(ctx, inputs)
	if err == nil && len(res.Vectors) > 0 && len(res.Vectors[0]) != d.dim {
		return res, fmt.Errorf("embedding model %q answered %d dimensions, EMBED_DIM is %d", d.EmbedModel(), len(res.Vectors[0]), d.dim)
	}
	return res, err
}
