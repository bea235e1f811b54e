// Package metrics is the worker's Prometheus instrumentation: River job outcomes, LLM
// calls (count, latency, tokens), revisions and conflicts applied by extraction, prompt
// sizes and consolidation clusters.
//
// Nothing is registered globally: New builds a Metrics with its own registry (plus the
// Go runtime and process collectors), and Handler serves it, so tests and several
// workers in one process never collide.
//
// A Metrics is fed from three places:
//   - Extracted, which makes *Metrics an extract.Observer (set extract.Config.Observer);
//   - WrapProvider, which wraps each llm.Provider so every Chat and Embed call is timed
//     and counted with its tokens;
//   - WatchRiver, which subscribes to a River client's job events and counts jobs by
//     kind and outcome;
//   - WatchBacklog, which reads the extraction backlog from the database at each scrape;
//   - WatchReverts, which reads the reverted revisions by origin at each scrape.
//
// ConsolidationClusters is called by the consolidation pass; Curated, which makes
// *Metrics a retention.Observer, by the history curator.
package metrics

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/credohq/credo/consolidate"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/retention"
	"github.com/credohq/credo/transfer"
)

// Namespace prefixes every credo metric.
const Namespace = "credo"

// Job outcomes (label "outcome" of credo_jobs_total).
const (
	JobCompleted   = "completed"   // the job finished
	JobRetried     = "retried"     // the attempt failed; River will try again
	JobFailed      = "failed"      // the last attempt failed; River discarded the job
	JobCancelled   = "cancelled"   // the job cancelled itself (a permanent error) or was cancelled
	JobSnoozed     = "snoozed"     // the job asked to run again later
	JobInterrupted = "interrupted" // the worker shut down while it ran; it is available again
)

// LLM call kinds and results (labels "kind" and "result" of credo_llm_calls_total).
const (
	CallChat  = "chat"
	CallEmbed = "embed"

	ResultOK        = "ok"
	ResultError     = "error"     // transport, HTTP status, timeout, cancellation
	ResultMalformed = "malformed" // an answer that arrived but cannot be used (llm.IsMalformed)
)

// Token directions (label "direction" of credo_llm_tokens_total).
const (
	TokensPrompt     = "prompt"
	TokensCompletion = "completion"
)

// Metrics holds credo's collectors and the registry they are registered in.
type Metrics struct {
	reg *prometheus.Registry

	jobs        *prometheus.CounterVec
	jobDuration *prometheus.HistogramVec

	llmCalls   *prometheus.CounterVec
	llmLatency *prometheus.HistogramVec
	llmTokens  *prometheus.CounterVec

	extractions        *prometheus.CounterVec
	extractionsStale   prometheus.Counter
	segments           prometheus.Counter
	refits             *prometheus.CounterVec
	extractionDuration prometheus.Histogram
	promptChars        prometheus.Histogram
	candidates         prometheus.Histogram
	outcomes           *prometheus.CounterVec
	revisions          *prometheus.CounterVec
	conflicts          *prometheus.CounterVec
	held               *prometheus.CounterVec
	redactions         *prometheus.CounterVec

	clusters       prometheus.Counter
	clustersJudged prometheus.Counter

	curateRuns      *prometheus.CounterVec
	curatedBeliefs  prometheus.Counter
	curatedEpisodes prometheus.Counter

	webhookDeliveries *prometheus.CounterVec
	webhookLatency    prometheus.Histogram
}

// Bucket layouts. LLM calls on a laptop CPU take from a few milliseconds (a cached
// embedding) to minutes (a 7B model on a long transcript).
var (
	latencyBuckets   = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}
	promptBuckets    = prometheus.ExponentialBuckets(1000, 2, 10) // 1k .. 512k characters
	candidateBuckets = []float64{0, 1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 256, 500}
)

// New returns a Metrics with its own registry, which also holds the Go runtime and
// process collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "jobs_total",
			Help: "River jobs worked by this process, by job kind and outcome (completed, retried, failed, cancelled, snoozed, interrupted).",
		}, []string{"kind", "outcome"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "job_duration_seconds",
			Help:    "Time one River job attempt spent running, by job kind.",
			Buckets: latencyBuckets,
		}, []string{"kind"}),

		llmCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "llm_calls_total",
			Help: "LLM calls by provider, model, kind (chat, embed) and result (ok, error, malformed).",
		}, []string{"provider", "model", "kind", "result"}),
		llmLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "llm_call_duration_seconds",
			Help:    "Duration of LLM calls, whatever their result, by provider, model and kind.",
			Buckets: latencyBuckets,
		}, []string{"provider", "model", "kind"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "llm_tokens_total",
			Help: "Tokens reported by the model server, by provider, model and direction (prompt, completion).",
		}, []string{"provider", "model", "direction"}),

		extractions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "extractions_total",
			Help: "Extraction attempts by result (ok, error, malformed).",
		}, []string{"result"}),
		extractionsStale: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "extraction_stale_total",
			Help: "Extractions done again because another writer revised the scope during the LLM call; per-scope sequencing keeps it near 0.",
		}),
		segments: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "extraction_segments_total",
			Help: "Segments of transcripts too long for one prompt, each extracted and applied on its own.",
		}),
		refits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "prompt_refits_total",
			Help: "Extraction prompts that did not fit the model's window after all and were made again smaller, by cause (too_long: estimated; refused: by the server; cut: evaluated shorter than sent, its answer dropped).",
		}, []string{"cause"}),
		extractionDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "extraction_duration_seconds",
			Help:    "Duration of one extraction attempt, LLM call, embedding and apply included.",
			Buckets: latencyBuckets,
		}),
		promptChars: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "extraction_prompt_chars",
			Help:    "Size of the extraction prompt (system and user message) in characters.",
			Buckets: promptBuckets,
		}),
		candidates: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "extraction_candidates",
			Help:    "Candidate beliefs shown to the LLM per extraction.",
			Buckets: candidateBuckets,
		}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "belief_outcomes_total",
			Help: "What the revision engine did with each extracted fact or resolution (accepted, superseded, backfilled, retracted, reinforced, duplicate, rejected, conflict).",
		}, []string{"outcome"}),
		revisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "revisions_total",
			Help: "Revisions applied by extraction, by action (supersede, retract, reinforce) and reason (correction, temporal, duplicate, restated).",
		}, []string{"action", "reason"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "conflicts_total",
			Help: "Revisions the engine refused and kept for review, by the refused action.",
		}, []string{"action"}),
		held: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "revisions_held_total",
			Help: "A model's destructive directives the containment guards held for review, by cause (not_from_user, other_entity, second_opinion, mass_revision; unrelated and ungrounded before identity).",
		}, []string{"cause"}),

		redactions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "redactions_total",
			Help: "Secrets replaced by placeholders, by kind (card, iban, api_key, token, private_key, password, or pattern for a policy's own) and where (transcript: at enqueue, counted once its episode is extracted; fact: in the model's answer; import: in what an import brought).",
		}, []string{"kind", "where"}),

		clusters: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "consolidation_clusters_total",
			Help: "Candidate clusters of similar beliefs found by consolidation.",
		}),
		clustersJudged: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "consolidation_clusters_judged_total",
			Help: "Consolidation clusters sent to the LLM for a judgment.",
		}),

		curateRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "curate_runs_total",
			Help: "History curations (RETAIN_HISTORY) by result (ok, error).",
		}, []string{"result"}),
		curatedBeliefs: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "curated_beliefs_total",
			Help: "Retired beliefs purged by the history curator, past RETAIN_HISTORY.",
		}),
		curatedEpisodes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "curated_episodes_total",
			Help: "Episodes purged by the history curator once none of their beliefs remained.",
		}),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.jobs, m.jobDuration,
		m.llmCalls, m.llmLatency, m.llmTokens,
		m.extractions, m.extractionsStale, m.segments, m.refits, m.extractionDuration, m.promptChars, m.candidates,
		m.outcomes, m.revisions, m.conflicts, m.held, m.redactions,
		m.clusters, m.clustersJudged,
		m.curateRuns, m.curatedBeliefs, m.curatedEpisodes,
	)
	m.registerWebhooks()
	return m
}

// Registry is the registry the metrics live in, for collectors of other packages.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format, or in OpenMetrics
// to a scraper that asks for it, which then sees the exemplars (mount it at /metrics).
// It counts its own scrapes and errors.
func (m *Metrics) Handler() http.Handler {
	return promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true}))
}

// Extracted records one extraction attempt; with it *Metrics is an extract.Observer.
// Revisions, conflicts and outcomes are those the attempt committed. Tokens
// and LLM calls are not read from the report; WrapProvider counts them, so they are
// not counted twice.
func (m *Metrics) Extracted(r extract.Report) {
	result := ResultOK
	switch {
	case llm.IsMalformed(r.Err):
		result = ResultMalformed
	case r.Err != nil:
		result = ResultError
	}
	m.extractions.WithLabelValues(result).Inc()
	m.extractionsStale.Add(float64(r.StaleRounds))
	m.segments.Add(float64(r.Segments))
	for _, cause := range r.Refits {
		m.refits.WithLabelValues(cause).Inc()
	}
	m.extractionDuration.Observe(r.Duration.Seconds())
	if r.PromptChars > 0 {
		// Zero means the attempt failed before the prompt was built.
		m.promptChars.Observe(float64(r.PromptChars))
		m.candidates.Observe(float64(r.Candidates))
	}
	// Outcomes are reported once committed: those of the segments a failed attempt
	// applied before it failed count too.
	for _, o := range r.Outcomes {
		m.outcome(o)
	}
	m.redacted(r.TranscriptRedacted, RedactedTranscript)
	m.redacted(r.Redacted, RedactedFact)
}

// Where a secret was redacted (label "where" of credo_redactions_total).
const (
	RedactedTranscript = "transcript"
	RedactedFact       = "fact"
	RedactedImport     = "import"
)

// Imported counts the secrets an import redacted (POST /v1/import).
func (m *Metrics) Imported(r *transfer.Report) {
	for _, sc := range r.Scopes {
		m.redacted(sc.Redacted, RedactedImport)
	}
}

// redacted counts the secrets of counts, by kind: a policy's patterns, whose names are
// the operators', are one kind ("pattern"), so that the labels stay few.
func (m *Metrics) redacted(counts map[string]int, where string) {
	for kind, n := range counts {
		if strings.HasPrefix(kind, "pattern:") {
			kind = "pattern"
		}
		m.redactions.WithLabelValues(kind, where).Add(float64(n))
	}
}

// outcome counts one applied outcome.
func (m *Metrics) outcome(o memory.Outcome) {
	m.outcomes.WithLabelValues(string(o.Kind)).Inc()
	switch o.Kind {
	case memory.OutcomeSuperseded, memory.OutcomeBackfilled, memory.OutcomeRetracted,
		memory.OutcomeReinforced, memory.OutcomeDuplicate:
		// Each of these wrote a revision event.
		m.revisions.WithLabelValues(orNone(string(o.Action)), orNone(string(o.Reason))).Inc()
	case memory.OutcomeConflict:
		m.conflicts.WithLabelValues(orNone(string(o.Action))).Inc()
		if o.Cause.Held() {
			m.held.WithLabelValues(string(o.Cause)).Inc()
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// ConsolidationClusters records one consolidation pass: found candidate clusters, of
// which judged were sent to the LLM.
func (m *Metrics) ConsolidationClusters(found, judged int) {
	m.clusters.Add(float64(max(found, 0)))
	m.clustersJudged.Add(float64(max(judged, 0)))
}

// Consolidated makes *Metrics a consolidate.Observer: clusters found, and those sent to
// the LLM (the rest were judged before).
func (m *Metrics) Consolidated(r consolidate.Report) {
	m.ConsolidationClusters(r.Clusters, r.Clusters-r.Judged)
}

// Curated records one history curation; with it *Metrics is a retention.Observer. What
// a failed curation removed is counted too: each scope commits on its own.
func (m *Metrics) Curated(r retention.Report) {
	result := ResultOK
	if r.Err != nil {
		result = ResultError
	}
	m.curateRuns.WithLabelValues(result).Inc()
	m.curatedBeliefs.Add(float64(max(r.Beliefs, 0)))
	m.curatedEpisodes.Add(float64(max(r.Episodes, 0)))
}

// WrapProvider returns p with every Chat and Embed call timed and counted, with the
// tokens the server reports. Labels use p's configured model names, not the names the
// server answers with, so a server that reports dated model versions does not grow the
// label set. Wrap the chat and the embedding provider separately even when they are the
// same value: each is counted under its own kind.
func (m *Metrics) WrapProvider(p llm.Provider) llm.Provider {
	if p == nil {
		return nil
	}
	return &provider{Provider: p, m: m}
}

type provider struct {
	llm.Provider
	m *Metrics
}

func (p *provider) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	start := time.Now()
	resp, err := p.Provider.Chat(ctx, req)
	p.m.llmCall(ctx, p.Name(), p.ChatModel(), CallChat, time.Since(start), resp.Usage, err)
	return resp, err
}

func (p *provider) Embed(ctx context.Context, inputs []string) (llm.EmbedResponse, error) {
	start := time.Now()
	resp, err := p.Provider.Embed(ctx, inputs)
	p.m.llmCall(ctx, p.Name(), p.EmbedModel(), CallEmbed, time.Since(start), resp.Usage, err)
	return resp, err
}

func (m *Metrics) llmCall(ctx context.Context, providerName, model, kind string, d time.Duration, u llm.Usage, err error) {
	result := ResultOK
	switch {
	case llm.IsMalformed(err):
		result = ResultMalformed
	case err != nil:
		result = ResultError
	}
	m.llmCalls.WithLabelValues(providerName, model, kind, result).Inc()
	observe(ctx, m.llmLatency.WithLabelValues(providerName, model, kind), d.Seconds())
	// A malformed answer still cost tokens; the servers report them.
	if u.PromptTokens > 0 {
		m.llmTokens.WithLabelValues(providerName, model, TokensPrompt).Add(float64(u.PromptTokens))
	}
	if u.CompletionTokens > 0 {
		m.llmTokens.WithLabelValues(providerName, model, TokensCompletion).Add(float64(u.CompletionTokens))
	}
}

// riverEvents are the job events WatchRiver counts.
var riverEvents = []river.EventKind{
	river.EventKindJobCompleted,
	river.EventKindJobFailed,
	river.EventKindJobCancelled,
	river.EventKindJobSnoozed,
	river.EventKindJobInterrupted,
}

// WatchRiver subscribes to client's job events and counts them by job kind and
// outcome until ctx ends or the client stops (River then closes the subscription); the
// returned channel is closed when it stops counting. The subscription is made before
// WatchRiver returns, so call it before client.Start to see every job; client must
// have Queues configured (River panics otherwise). Pass a context that outlives the
// client's graceful stop to count the jobs that finish during it.
//
// River drops events when a subscriber falls 1,000 behind; counting is fast enough
// that this does not happen in practice.
func (m *Metrics) WatchRiver(ctx context.Context, client *river.Client[pgx.Tx]) <-chan struct{} {
	events, cancel := client.Subscribe(riverEvents...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-events:
				if !ok {
					return
				}
				m.jobEvent(e)
			}
		}
	}()
	return done
}

// jobEvent counts one River job event.
func (m *Metrics) jobEvent(e *river.Event) {
	if e == nil || e.Job == nil {
		return
	}
	outcome, ok := jobOutcome(e)
	if !ok {
		return
	}
	m.jobs.WithLabelValues(e.Job.Kind, outcome).Inc()
	if e.JobStats != nil && e.JobStats.RunDuration > 0 {
		m.jobDuration.WithLabelValues(e.Job.Kind).Observe(e.JobStats.RunDuration.Seconds())
	}
}

// jobOutcome names what an event says happened to its job. A failed attempt is told
// apart from a final failure by the job's new state: retryable (or available, when
// River retries at once) versus discarded.
func jobOutcome(e *river.Event) (string, bool) {
	switch e.Kind {
	case river.EventKindJobCompleted:
		return JobCompleted, true
	case river.EventKindJobCancelled:
		return JobCancelled, true
	case river.EventKindJobSnoozed:
		return JobSnoozed, true
	case river.EventKindJobInterrupted:
		return JobInterrupted, true
	case river.EventKindJobFailed:
		if e.Job.State == rivertype.JobStateDiscarded {
			return JobFailed, true
		}
		return JobRetried, true
	}
	return "", false
}

// Compile-time checks.
var (
	_ extract.Observer   = (*Metrics)(nil)
	_ retention.Observer = (*Metrics)(nil)
	_ llm.Provider       = (*provider)(nil)
)
