// Package config reads credo's settings: every setting is a flag whose default comes
// from an environment variable, and a bad value fails at start naming the variable.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/credohq/credo/redact"
)

// Config is every setting of credo's commands; each command registers the groups it uses.
type Config struct {
	DatabaseURL string

	LLMProvider   string
	OllamaHost    string
	OpenAIBaseURL string
	OpenAIAPIKey  string
	ChatModel     string
	EmbedProvider string
	EmbedModel    string
	EmbedDim      int
	LLMTimeout    time.Duration
	// ModelContext and EmbedContext are llm.Config's Context and EmbedContext.
	ModelContext int
	EmbedContext int

	JobTimeout      time.Duration
	RescueAfter     time.Duration
	Workers         int
	MaxAttempts     int
	MaxCandidates   int
	Examples        int
	ExamplesScope   string
	ConfidenceFloor float64
	HTTPAddr        string
	ShutdownTimeout time.Duration
	LogLevel        string
	LogFormat       string

	ConsolidateInterval   time.Duration
	ConsolidateThreshold  float64
	ConsolidateMaxCluster int
	// ExactSearchLimit is memory.Config.ExactSearchLimit.
	ExactSearchLimit int
	// RevisionSimilarityFloor, MaxRevisionsPerEpisode and MaxRevisionsPerDay are
	// memory.Containment's SimilarityFloor (0: the embedding model's default),
	// MaxRevisions and MaxRevisionsPerDay.
	RevisionSimilarityFloor float64
	MaxRevisionsPerEpisode  int
	MaxRevisionsPerDay      int

	// CitusShardCount is migrations.Config.ShardCount: the shards of each table the
	// migrations distribute on Citus.
	CitusShardCount int

	// RetainHistory is how long retired beliefs are kept; zero keeps them forever.
	RetainHistory time.Duration

	APIBehindGate   bool
	APIMaxBodyBytes int64
	APIMaxRecords   int
	APIRateLimit    float64
	APIRateBurst    int

	// Redact is the kinds of secret redacted from transcripts and the model's facts
	// (REDACT), where no policy names its own.
	Redact redact.Set

	// PublicURL is where browsers reach the worker ("": as they connect); an https URL
	// makes the inspector's cookie Secure behind a TLS proxy.
	PublicURL string
	// InspectorSessionTTL is how long an inspector login lasts.
	InspectorSessionTTL time.Duration

	// WebhookSecretKey seals webhook secrets; WebhookAllowPrivate lets webhooks reach
	// internal addresses and plain http; WebhookTimeout bounds one delivery attempt;
	// WebhookDisableAfter is how long a webhook may fail before it is disabled.
	WebhookSecretKey    string
	WebhookAllowPrivate bool
	WebhookTimeout      time.Duration
	WebhookDisableAfter time.Duration
	WebhookWorkers      int
}

// SecureCookies says whether browsers reach the worker over https by PublicURL.
func (c *Config) SecureCookies() bool { return strings.HasPrefix(c.PublicURL, "https://") }

// Group selects the settings a command registers.
type Group int

// The groups of settings; a command ORs those it needs.
const (
	// GroupDB is the database, which every command needs.
	GroupDB Group = 1 << iota
	// GroupLLM is the chat and embedding models and their servers.
	GroupLLM
	// GroupWorker is the worker's jobs, queues and HTTP server.
	GroupWorker
	// GroupConsolidate is what a consolidation pass needs, in the worker or the CLI.
	GroupConsolidate
	// GroupRetention is the retention of history, for the worker's curator and the CLI.
	GroupRetention
	// GroupJobs is what inserting extraction jobs needs, in the worker or enqueue.
	GroupJobs
	// GroupWebhooks is webhooks' secrets and guard, in the worker or the CLI.
	GroupWebhooks
)

// MinRetainHistory is the shortest RETAIN_HISTORY: history is an audit trail, and a
// period of minutes is far likelier a typo than a wish.
const MinRetainHistory = time.Hour

// setting is one flag and its environment variable.
type setting struct {
	group      Group
	flag, env  string
	def, usage string
	set        func(c *Config, v string) error
}

func settings() []setting {
	return []setting{
		{GroupDB, "database-url", "DATABASE_URL", "", "PostgreSQL URL (required)", str(func(c *Config) *string { return &c.DatabaseURL })},

		{GroupLLM, "llm-provider", "LLM_PROVIDER", "ollama", "chat provider: ollama or openai", oneOf(func(c *Config) *string { return &c.LLMProvider }, "ollama", "openai")},
		{GroupLLM, "ollama-host", "OLLAMA_HOST", "http://localhost:11434", "Ollama server URL", urlValue(func(c *Config) *string { return &c.OllamaHost })},
		{GroupLLM, "openai-base-url", "OPENAI_BASE_URL", "https://api.openai.com/v1", "OpenAI-compatible API base URL, with /v1", urlValue(func(c *Config) *string { return &c.OpenAIBaseURL })},
		{GroupLLM, "openai-api-key", "OPENAI_API_KEY", "", "API key for the OpenAI-compatible server", str(func(c *Config) *string { return &c.OpenAIAPIKey })},
		{GroupLLM, "chat-model", "CHAT_MODEL", "qwen2.5:7b", "chat model for extraction and consolidation", nonEmpty(func(c *Config) *string { return &c.ChatModel })},
		{GroupLLM, "embed-provider", "EMBED_PROVIDER", "", "embedding provider: ollama or openai (default: LLM_PROVIDER)", oneOf(func(c *Config) *string { return &c.EmbedProvider }, "", "ollama", "openai")},
		{GroupLLM, "embed-model", "EMBED_MODEL", "nomic-embed-text", "embedding model", nonEmpty(func(c *Config) *string { return &c.EmbedModel })},
		{GroupLLM, "embed-dim", "EMBED_DIM", "0", "embedding dimension, 1..2000 (0: learned from the model's first answer)", intRange(func(c *Config) *int { return &c.EmbedDim }, 0, 2000)},
		{GroupLLM, "model-context", "MODEL_CONTEXT", "0", "the chat model's window in tokens (0: on Ollama the model's own, else 8192; on Ollama a cap)", intRange(func(c *Config) *int { return &c.ModelContext }, 0, 10_000_000)},
		{GroupLLM, "embed-context", "EMBED_CONTEXT", "0", "the embedding model's window in tokens (0: on Ollama the model's own, else 8192; on Ollama a cap)", intRange(func(c *Config) *int { return &c.EmbedContext }, 0, 10_000_000)},
		{GroupLLM, "llm-timeout", "LLM_TIMEOUT", "2m", "timeout of one LLM HTTP call", duration(func(c *Config) *time.Duration { return &c.LLMTimeout })},

		{GroupWorker, "job-timeout", "JOB_TIMEOUT", "5m", "how long one episode's extraction (or another job) may run", duration(func(c *Config) *time.Duration { return &c.JobTimeout })},
		{GroupWorker, "rescue-after", "RESCUE_AFTER", "", "when a job left running by a crashed worker is taken over (default: JOB_TIMEOUT + 1m); an extraction job ends its turn before it", optDuration(func(c *Config) *time.Duration { return &c.RescueAfter })},
		{GroupWorker, "workers", "WORKERS", "4", "extraction jobs (scopes) run at once by this process", intRange(func(c *Config) *int { return &c.Workers }, 1, 1000)},
		{GroupWorker | GroupJobs, "redact", "REDACT", "all", "kinds of secret replaced by placeholders before a transcript is stored or sent to a model, and in the model's facts: all, none, or some of " + strings.Join(kindNames(), ", ") + " joined by commas", redactKinds(func(c *Config) *redact.Set { return &c.Redact })},
		{GroupWorker | GroupJobs, "max-attempts", "MAX_ATTEMPTS", "10", "attempts of an episode before it fails (River's backoff between them)", intRange(func(c *Config) *int { return &c.MaxAttempts }, 1, 100)},
		{GroupWorker, "max-candidates", "MAX_CANDIDATES", "24", "most beliefs shown to the LLM per extraction (K)", intRange(func(c *Config) *int { return &c.MaxCandidates }, 1, 500)},
		{GroupWorker, "examples", "EXAMPLES", "3", "past revisions shown as worked examples per extraction (0: off)", intRange(func(c *Config) *int { return &c.Examples }, 0, 20)},
		{GroupWorker | GroupRetention, "examples-scope", "EXAMPLES_SCOPE", "", "an operator-curated scope, holding no user data, whose revisions every scope may be shown as examples", str(func(c *Config) *string { return &c.ExamplesScope })},
		{GroupWorker, "confidence-floor", "CONFIDENCE_FLOOR", "0.5", "beliefs under this confidence are not stored", floatRange(func(c *Config) *float64 { return &c.ConfidenceFloor }, 0, 1)},
		{GroupWorker, "http-addr", "HTTP_ADDR", ":9464", "where /healthz, /metrics, the HTTP API and MCP are served (off: nowhere)", httpAddr(func(c *Config) *string { return &c.HTTPAddr })},
		{GroupWorker, "shutdown-timeout", "SHUTDOWN_TIMEOUT", "30s", "how long running jobs may finish after SIGTERM before they are cancelled and retried", duration(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
		{GroupWorker, "consolidate-interval", "CONSOLIDATE_INTERVAL", "1h", "how often scopes changed since their last consolidation are enqueued", duration(func(c *Config) *time.Duration { return &c.ConsolidateInterval })},
		{GroupConsolidate, "consolidate-threshold", "CONSOLIDATE_THRESHOLD", "0.80", "cosine similarity from which two beliefs are consolidation candidates", floatRange(func(c *Config) *float64 { return &c.ConsolidateThreshold }, 0.01, 1)},
		{GroupConsolidate, "consolidate-max-cluster", "CONSOLIDATE_MAX_CLUSTER", "8", "most beliefs in one consolidation cluster (one LLM call)", intRange(func(c *Config) *int { return &c.ConsolidateMaxCluster }, 2, 64)},
		{GroupConsolidate, "revision-similarity-floor", "REVISION_SIMILARITY_FLOOR", "0", "cosine similarity from which a model's revision is related to its target and grounded in the conversation (0: the embedding model's default; eval calibrate measures one)", floatRange(func(c *Config) *float64 { return &c.RevisionSimilarityFloor }, 0, 1)},
		{GroupConsolidate, "max-revisions-per-episode", "MAX_REVISIONS_PER_EPISODE", "5", "most supersessions and retractions one transcript applies that the user's own words do not confirm; the rest wait for review", intRange(func(c *Config) *int { return &c.MaxRevisionsPerEpisode }, 1, 1000)},
		{GroupConsolidate, "max-revisions-per-day", "MAX_REVISIONS_PER_DAY", "10", "most unconfirmed supersessions and retractions a scope's transcripts within 24 hours of each other (by their time) apply; the rest wait for review", intRange(func(c *Config) *int { return &c.MaxRevisionsPerDay }, 1, 100000)},
		{GroupConsolidate, "exact-search-limit", "EXACT_SEARCH_LIMIT", "0", "0: every scope's nearest-neighbour reads scan it exactly; N: a scope of more than N rows (per table and embedding model) gets an approximate HNSW index of its own, faster but missing some nearest", intRange(func(c *Config) *int { return &c.ExactSearchLimit }, 0, 10_000_000)},
		{GroupRetention, "retain-history", "RETAIN_HISTORY", "", "keep superseded, retracted and forgotten beliefs this long, then purge them (at least 1h, e.g. 8760h; default: forever)", optDurationAtLeast(func(c *Config) *time.Duration { return &c.RetainHistory }, MinRetainHistory)},
		{GroupWorker, "api-behind-gate", "API_BEHIND_GATE", "false", "another gate (e.g. an authenticating proxy) guards the HTTP API: without API keys it serves every scope on any address", boolValue(func(c *Config) *bool { return &c.APIBehindGate })},
		{GroupWorker, "api-max-body-bytes", "API_MAX_BODY_BYTES", "4MiB", "largest HTTP API request body (bytes, or with KiB/MiB); larger ones get 413", byteSize(func(c *Config) *int64 { return &c.APIMaxBodyBytes }, 1<<10, 1<<30)},
		{GroupWorker, "api-max-records", "API_MAX_RECORDS", "1000", "most transcripts per HTTP API request; more get 413", intRange(func(c *Config) *int { return &c.APIMaxRecords }, 1, 100_000)},
		{GroupWorker, "api-rate-limit", "API_RATE_LIMIT", "20", "requests per second per API key (0: no limit); more get 429", floatRange(func(c *Config) *float64 { return &c.APIRateLimit }, 0, 1e6)},
		{GroupWorker, "public-url", "PUBLIC_URL", "", "the address browsers reach the worker at, e.g. https://credo.example.com behind a TLS proxy: an https URL makes the inspector's login cookie Secure", optURL(func(c *Config) *string { return &c.PublicURL })},
		{GroupWorker, "inspector-session-ttl", "INSPECTOR_SESSION_TTL", "12h", "how long an inspector login lasts before the key must be entered again", duration(func(c *Config) *time.Duration { return &c.InspectorSessionTTL })},
		{GroupWorker, "api-rate-burst", "API_RATE_BURST", "40", "requests an API key may send at once before API_RATE_LIMIT applies", intRange(func(c *Config) *int { return &c.APIRateBurst }, 1, 1_000_000)},
		{GroupWebhooks, "webhook-secret-key", "WEBHOOK_SECRET_KEY", "", "key (32 characters or more, e.g. openssl rand -base64 32) that seals webhook secrets in the database; the same on every process; without it no webhook is created or sent", str(func(c *Config) *string { return &c.WebhookSecretKey })},
		{GroupWebhooks, "webhook-allow-private", "WEBHOOK_ALLOW_PRIVATE", "false", "let webhooks reach loopback, private and link-local addresses, and plain http (development only)", boolValue(func(c *Config) *bool { return &c.WebhookAllowPrivate })},
		{GroupWorker, "webhook-timeout", "WEBHOOK_TIMEOUT", "10s", "how long one webhook delivery attempt may take", duration(func(c *Config) *time.Duration { return &c.WebhookTimeout })},
		{GroupWorker, "webhook-disable-after", "WEBHOOK_DISABLE_AFTER", "120h", "a webhook whose deliveries all failed this long is disabled", duration(func(c *Config) *time.Duration { return &c.WebhookDisableAfter })},
		{GroupWorker, "webhook-workers", "WEBHOOK_WORKERS", "4", "webhook deliveries sent at once", intRange(func(c *Config) *int { return &c.WebhookWorkers }, 1, 256)},
		{GroupDB, "citus-shard-count", "CITUS_SHARD_COUNT", "32", "on Citus: shards of each table distributed by scope, set when the migrations first distribute it (plain PostgreSQL: unused)", intRange(func(c *Config) *int { return &c.CitusShardCount }, 1, 64000)},
		{GroupDB, "log-level", "LOG_LEVEL", "info", "debug, info, warn or error", oneOf(func(c *Config) *string { return &c.LogLevel }, "debug", "info", "warn", "error")},
		{GroupDB, "log-format", "LOG_FORMAT", "text", "text or json", oneOf(func(c *Config) *string { return &c.LogFormat }, "text", "json")},
	}
}

// Load registers the settings of groups on fs, with defaults from getenv, and reports
// every bad environment value by its variable's name. Call fs.Parse afterwards, then
// Check.
func Load(fs *flag.FlagSet, groups Group, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Config{}
	var errs []error
	for _, s := range settings() {
		if s.group&groups == 0 {
			continue
		}
		v, fromEnv := getenv(s.env), true
		if v == "" {
			v, fromEnv = s.def, false
		}
		if err := s.set(c, v); err != nil {
			if fromEnv {
				errs = append(errs, fmt.Errorf("%s: %w", s.env, err))
			} else {
				panic(fmt.Sprintf("config: bad default of %s: %v", s.env, err))
			}
		}
		set := s.set
		fs.Func(s.flag, fmt.Sprintf("%s (env %s, default %q)", s.usage, s.env, s.def), func(v string) error { return set(c, v) })
	}
	return c, errors.Join(errs...)
}

// Check validates what depends on several settings, after flags are parsed.
func (c *Config) Check(groups Group) error {
	var errs []error
	if groups&GroupDB != 0 {
		if c.DatabaseURL == "" {
			errs = append(errs, errors.New("DATABASE_URL is required (or --database-url)"))
		} else if _, err := ParseDatabaseURL(c.DatabaseURL); err != nil {
			errs = append(errs, err)
		}
	}
	if groups&GroupLLM != 0 && c.EmbedProvider == "" {
		c.EmbedProvider = c.LLMProvider
	}
	if groups&GroupWorker != 0 {
		if c.RescueAfter == 0 {
			c.RescueAfter = c.JobTimeout + time.Minute
		}
		if c.RescueAfter <= c.JobTimeout {
			errs = append(errs, fmt.Errorf("RESCUE_AFTER (%s) must be longer than JOB_TIMEOUT (%s), or running jobs would be taken over", c.RescueAfter, c.JobTimeout))
		}
	}
	return errors.Join(errs...)
}

// redactKinds reads a list of kinds of secret, as redact.ParseSet does.
func redactKinds(field func(*Config) *redact.Set) func(*Config, string) error {
	return func(c *Config, v string) error {
		set, err := redact.ParseSet(v)
		if err != nil {
			return err
		}
		*field(c) = set
		return nil
	}
}

func kindNames() []string {
	var out []string
	for _, k := range redact.AllKinds() {
		out = append(out, string(k))
	}
	return out
}

func str(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = v; return nil }
}

func nonEmpty(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("must not be empty")
		}
		*field(c) = strings.TrimSpace(v)
		return nil
	}
}

func oneOf(field func(*Config) *string, allowed ...string) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.ToLower(strings.TrimSpace(v))
		if slices.Contains(allowed, v) {
			*field(c) = v
			return nil
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(nonEmptyOf(allowed), ", "))
	}
}

func nonEmptyOf(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func urlValue(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%q is not an http(s) URL", v)
		}
		*field(c) = strings.TrimRight(v, "/")
		return nil
	}
}

func duration(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%q is not a positive duration like 90s or 5m", v)
		}
		*field(c) = d
		return nil
	}
}

func optDuration(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v == "" {
			*field(c) = 0
			return nil
		}
		return duration(field)(c, v)
	}
}

// optDurationAtLeast reads an optional duration of at least lo; empty is zero (unset).
// A number without a unit is refused with the unit asked for, not taken as nanoseconds.
func optDurationAtLeast(field func(*Config) *time.Duration, lo time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.TrimSpace(v)
		if v == "" {
			*field(c) = 0
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < lo {
			return fmt.Errorf("%q is not a duration of at least %s with its unit, like 720h or 8760h", v, shortDuration(lo))
		}
		*field(c) = d
		return nil
	}
}

// shortDuration writes d as whole hours when it is: 1h, not 1h0m0s.
func shortDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

func intRange(field func(*Config) *int, lo, hi int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%q is not a whole number in %d..%d", v, lo, hi)
		}
		*field(c) = n
		return nil
	}
}

func floatRange(field func(*Config) *float64, lo, hi float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < lo || f > hi {
			return fmt.Errorf("%q is not a number in %g..%g", v, lo, hi)
		}
		*field(c) = f
		return nil
	}
}

func boolValue(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*field(c) = b
		return nil
	}
}

// byteSize reads a size in bytes, with an optional KiB, MiB or GiB suffix.
func byteSize(field func(*Config) *int64, lo, hi int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		s, unit := strings.TrimSpace(v), int64(1)
		for suffix, u := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
			if n, ok := strings.CutSuffix(s, suffix); ok {
				s, unit = strings.TrimSpace(n), u
				break
			}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n > hi/unit || n*unit < lo {
			return fmt.Errorf("%q is not a size in %d..%d bytes (a number of bytes, or with KiB, MiB or GiB)", v, lo, hi)
		}
		*field(c) = n * unit
		return nil
	}
}

// httpAddr reads a listen address; "off" (or an empty flag) means no HTTP server.
// optURL is urlValue, or no URL when v is empty.
func optURL(field func(*Config) *string) func(*Config, string) error {
	set := urlValue(field)
	return func(c *Config, v string) error {
		if strings.TrimSpace(v) == "" {
			*field(c) = ""
			return nil
		}
		return set(c, strings.TrimSpace(v))
	}
}

func httpAddr(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.TrimSpace(v)
		if strings.EqualFold(v, "off") {
			v = ""
		}
		*field(c) = v
		return nil
	}
}
