package consolidate

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// Defaults of Config.
const (
	DefaultInterval         = time.Hour
	DefaultThreshold        = 0.80
	DefaultMaxCluster       = 8
	DefaultMaxSeeds         = 1000
	DefaultMaxCalls         = 16
	DefaultMalformedRetries = 2
	DefaultSettle           = time.Minute
)

// Config configures a Worker.
type Config struct {
	Store *memory.Store
	Chat  llm.Chatter
	// Embed, when set, embeds what extraction stored without vectors (see
	// memory.Unembedded) before a pass, so every active belief can be clustered.
	Embed llm.Embedder
	// EmbedModel is the model whose vectors are compared; beliefs embedded with another
	// model are not consolidated.
	EmbedModel string
	// Threshold is the cosine similarity from which two beliefs are neighbours.
	Threshold float64
	// MaxCluster bounds the beliefs of one cluster, and so one prompt.
	MaxCluster int
	// MaxSeeds bounds the changed beliefs one pass starts from (softly: beliefs
	// changed at the same instant are taken together); the rest is left to a
	// follow-up pass.
	MaxSeeds int
	// MaxCalls bounds the clusters one pass sends to the LLM, so that a pass fits in a
	// job's timeout; the rest is left to a follow-up pass.
	MaxCalls int
	// MalformedRetries is how many times a malformed answer is asked again before the
	// cluster is left as it is. Negative: never.
	MalformedRetries int
	// Settle keeps the watermark this far behind the database's clock, so that a
	// belief written by a transaction that read its clock before a pass and committed
	// after it (or by a worker whose clock lags) is not passed over. Negative: zero.
	Settle time.Duration
	Logger *slog.Logger
	// Observer, when set, is told about each job's pass (metrics).
	Observer Observer
}

// ErrConfig is returned for an invalid Config.
var ErrConfig = errors.New("consolidate: invalid config")

// withDefaults returns c with the defaults of what it leaves zero; a negative
// MalformedRetries or Settle is zero.
func (c Config) withDefaults() Config {
	c.Threshold = cmp.Or(c.Threshold, DefaultThreshold)
	c.MaxCluster = cmp.Or(c.MaxCluster, DefaultMaxCluster)
	if c.MaxSeeds <= 0 {
		c.MaxSeeds = DefaultMaxSeeds
	}
	if c.MaxCalls <= 0 {
		c.MaxCalls = DefaultMaxCalls
	}
	c.MalformedRetries = max(cmp.Or(c.MalformedRetries, DefaultMalformedRetries), 0)
	c.Settle = max(cmp.Or(c.Settle, DefaultSettle), 0)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// validate says what c, with its defaults, lacks or gets wrong.
func (c Config) validate() error {
	switch {
	case c.Store == nil || c.Chat == nil || c.EmbedModel == "":
		return fmt.Errorf("%w: Store, Chat and EmbedModel are required", ErrConfig)
	case c.Threshold < 0 || c.Threshold > 1:
		return fmt.Errorf("%w: threshold %v is not a cosine similarity in 0..1", ErrConfig, c.Threshold)
	case c.MaxCluster < 2:
		return fmt.Errorf("%w: a cluster of at most %d beliefs has nothing to consolidate", ErrConfig, c.MaxCluster)
	}
	return nil
}
