package api

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/time/rate"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/recall"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transfer"
	"github.com/credohq/credo/webhook"
)

// Defaults of Config's limits.
const (
	DefaultMaxBodyBytes = 4 << 20 // 4 MiB
	DefaultMaxRecords   = 1000
	DefaultRateLimit    = 20 // requests per second per key
	DefaultRateBurst    = 40
	// DefaultBodyReadTimeout bounds how long a client may take to send its body.
	DefaultBodyReadTimeout = 30 * time.Second
)

// Config configures a Server.
type Config struct {
	Store *memory.Store // required
	// Pool is the database Store is on (required): API keys and inspector sessions are
	// read there, and an enqueue's transaction, which inserts River's jobs, runs there.
	Pool *pgxpool.Pool
	// Jobs inserts extraction jobs for POST /v1/transcripts: the worker's River client.
	Jobs extract.Inserter
	// Redact redacts transcripts before they are stored, with each scope's policy over
	// it (REDACT; nil: redact.Default).
	Redact *redact.Redactor
	// Embed embeds queries and operator statements; EmbedModel names its vectors.
	Embed      llm.Embedder
	EmbedModel string
	// Chat answers questions (POST /v1/ask, MCP ask); AskObserver is told what each cost.
	Chat        llm.Chatter
	AskObserver recall.Observer
	// ImportObserver is told what each import did (POST /v1/import).
	ImportObserver func(*transfer.Report)
	// Addr is the address served (HTTP_ADDR); it tells whether the API may run without
	// keys. Empty for a Server only used over stdio.
	Addr string
	// BehindGate says that another gate (e.g. an authenticating proxy) guards the API:
	// without keys, every request is then served.
	BehindGate bool
	// MaxBodyBytes bounds a request body (DefaultMaxBodyBytes when zero).
	MaxBodyBytes int64
	// MaxRecords bounds the transcripts of one request (DefaultMaxRecords when zero).
	MaxRecords int
	// RateLimit is each key's sustained requests per second (DefaultRateLimit when
	// zero; negative: no limit), with bursts of RateBurst (DefaultRateBurst when zero).
	RateLimit float64
	RateBurst int
	// BodyReadTimeout bounds the wait for a request's body (DefaultBodyReadTimeout when
	// zero): a body too slow to arrive is a 408, and its connection closes.
	BodyReadTimeout time.Duration
	// Webhooks manages webhook subscriptions (nil: on Pool, without WEBHOOK_SECRET_KEY,
	// so that none can be created).
	Webhooks *webhook.Webhooks
	Logger   *slog.Logger
	Now      func() time.Time
}

// Settings returns c with the address, gate and limits of the worker's configuration.
// An API_RATE_LIMIT of 0 turns the rate limit off.
func (c Config) Settings(cfg *config.Config) Config {
	c.Addr, c.BehindGate = cfg.HTTPAddr, cfg.APIBehindGate
	c.MaxBodyBytes, c.MaxRecords = cfg.APIMaxBodyBytes, cfg.APIMaxRecords
	c.RateLimit, c.RateBurst = cfg.APIRateLimit, cfg.APIRateBurst
	if c.RateLimit == 0 {
		c.RateLimit = -1
	}
	return c
}

// ErrConfig is returned for an invalid Config.
var ErrConfig = errors.New("api: invalid config")

// withDefaults returns c with the defaults of what it leaves zero (or negative, but
// RateLimit's: no limit); EmbedModel is the embedder's own when it names one.
func (c Config) withDefaults() Config {
	if p, ok := c.Embed.(llm.Provider); ok && c.EmbedModel == "" {
		c.EmbedModel = p.EmbedModel()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Redact == nil {
		c.Redact = redact.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Webhooks == nil && c.Pool != nil {
		c.Webhooks, _ = webhook.NewWebhooks(webhook.Config{Pool: c.Pool, Now: c.Now}) // without a key it cannot fail
	}
	if c.BodyReadTimeout <= 0 {
		c.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxRecords <= 0 {
		c.MaxRecords = DefaultMaxRecords
	}
	if c.RateLimit == 0 {
		c.RateLimit = DefaultRateLimit
	}
	if c.RateBurst <= 0 {
		c.RateBurst = DefaultRateBurst
	}
	return c
}

// validate says what c lacks.
func (c Config) validate() error {
	if c.Store == nil || c.Pool == nil {
		return fmt.Errorf("%w: Store and Pool are required", ErrConfig)
	}
	return nil
}

// limit is RateLimit as a rate; negative is no limit.
func (c Config) limit() rate.Limit {
	if c.RateLimit < 0 {
		return rate.Inf
	}
	return rate.Limit(c.RateLimit)
}
