package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/retention"
)

// scrape GETs m's handler and parses the exposition.
type scrape map[string]*dto.MetricFamily

func scrapeOf(t *testing.T, m *Metrics) scrape {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	require.NoError(t, err)
	return fams
}

// value is a counter's value, a histogram's sample count or a gauge's value for the
// series of name whose labels include labels ("k=v" pairs); 0 when there is none.
func (s scrape) value(name string, labels ...string) float64 {
	fam := s[name]
	if fam == nil {
		return 0
	}
	var sum float64
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetHistogram() != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}

// sum is a histogram's sum of observations.
func (s scrape) sum(name string, labels ...string) float64 {
	var sum float64
	if fam := s[name]; fam != nil {
		for _, m := range fam.GetMetric() {
			if hasLabels(m, labels) && m.GetHistogram() != nil {
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, labels []string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for _, kv := range labels {
		k, v, _ := strings.Cut(kv, "=")
		if have[k] != v {
			return false
		}
	}
	return true
}

func TestRegistryIsOwnAndHasRuntimeCollectors(t *testing.T) {
	t.Parallel()
	a, b := New(), New() // no global registration: two never collide
	a.ConsolidationClusters(3, 1)
	sa, sb := scrapeOf(t, a), scrapeOf(t, b)
	require.Equal(t, 3.0, sa.value("credo_consolidation_clusters_total"))
	require.Equal(t, 1.0, sa.value("credo_consolidation_clusters_judged_total"))
	require.Equal(t, 0.0, sb.value("credo_consolidation_clusters_total"))
	require.Contains(t, sa, "go_goroutines")
	require.Contains(t, sa, "process_start_time_seconds")
	require.Contains(t, sa, "promhttp_metric_handler_requests_total")
}

func TestWrapProviderCountsCallsLatencyAndTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range []string{llm.ProviderOpenAI, llm.ProviderOllama} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			var (
				p   llm.Provider
				err error
			)
			if name == llm.ProviderOllama {
				p, err = llm.NewOllama(srv.OllamaConfig())
			} else {
				p, err = llm.NewOpenAI(srv.OpenAIConfig())
			}
			require.NoError(t, err)
			m := New()
			w := m.WrapProvider(p)
			require.Equal(t, p.Name(), w.Name())
			require.Equal(t, p.ChatModel(), w.ChatModel())
			require.Equal(t, p.EmbedModel(), w.EmbedModel())

			srv.Script(
				llmtest.Reply{Content: `{"reasoning":"","facts":[]}`, PromptTokens: 120, CompletionTokens: 30},
				llmtest.Reply{Content: "the user moved, I think", PromptTokens: 100, CompletionTokens: 7},
				llmtest.Reply{Status: http.StatusBadRequest},
			)
			req := llm.ChatRequest{
				Messages:   []llm.Message{{Role: llm.RoleUser, Content: "I moved to Miami."}},
				SchemaName: prompts.ExtractionSchemaName, Schema: prompts.ExtractionSchema(),
			}
			_, err = w.Chat(ctx, req)
			require.NoError(t, err)
			_, err = w.Chat(ctx, req)
			require.True(t, llm.IsMalformed(err), "%v", err)
			_, err = w.Chat(ctx, req)
			require.Error(t, err)
			require.False(t, llm.IsMalformed(err))
			res, err := w.Embed(ctx, []string{"User lives in Miami", "User works at Acme"})
			require.NoError(t, err)
			require.Len(t, res.Vectors, 2)

			s := scrapeOf(t, m)
			base := []string{"provider=" + name, "model=" + llmtest.DefaultChatModel, "kind=chat"}
			require.Equal(t, 1.0, s.value("credo_llm_calls_total", append(base, "result=ok")...))
			require.Equal(t, 1.0, s.value("credo_llm_calls_total", append(base, "result=malformed")...))
			require.Equal(t, 1.0, s.value("credo_llm_calls_total", append(base, "result=error")...))
			require.Equal(t, 1.0, s.value("credo_llm_calls_total",
				"provider="+name, "model="+llmtest.DefaultEmbedModel, "kind=embed", "result=ok"))
			require.Equal(t, 3.0, s.value("credo_llm_call_duration_seconds", base...))
			require.Greater(t, s.sum("credo_llm_call_duration_seconds", base...), 0.0)
			require.Equal(t, 1.0, s.value("credo_llm_call_duration_seconds", "provider="+name, "kind=embed"))
			require.Equal(t, 220.0, s.value("credo_llm_tokens_total", "provider="+name, "model="+llmtest.DefaultChatModel, "direction=prompt"))
			require.Equal(t, 37.0, s.value("credo_llm_tokens_total", "provider="+name, "model="+llmtest.DefaultChatModel, "direction=completion"))
		})
	}
}

func TestExtractedCountsRevisionsConflictsAndSizes(t *testing.T) {
	t.Parallel()
	m := New()
	var _ extract.Observer = m
	m.Extracted(extract.Report{
		EpisodeID: 1, Scope: "user:42", Candidates: 3, PromptChars: 4200, Duration: 2 * time.Second,
		Outcomes: []memory.Outcome{
			{Kind: memory.OutcomeAccepted, BeliefID: 10},
			{Kind: memory.OutcomeSuperseded, BeliefID: 11, TargetID: 1, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal},
			{Kind: memory.OutcomeBackfilled, BeliefID: 12, TargetID: 2, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal},
			{Kind: memory.OutcomeSuperseded, BeliefID: 13, TargetID: 3, Action: memory.ActionSupersede, Reason: memory.ReasonCorrection},
			{Kind: memory.OutcomeRetracted, TargetID: 4, Action: memory.ActionRetract, Reason: memory.ReasonTemporal},
			{Kind: memory.OutcomeReinforced, TargetID: 5, Action: memory.ActionReinforce, Reason: memory.ReasonRestated},
			{Kind: memory.OutcomeDuplicate, TargetID: 6, Action: memory.ActionReinforce, Reason: memory.ReasonRestated},
			{Kind: memory.OutcomeRejected},
			{Kind: memory.OutcomeConflict, ConflictID: 1, TargetID: 7, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal,
				Cause: memory.CauseUnrelated},
		},
	})
	// A failed attempt reports the outcomes it committed (of the segments of a long
	// transcript applied before it failed), and its size.
	m.Extracted(extract.Report{
		EpisodeID: 2, Candidates: 30, PromptChars: 90000, Duration: time.Second, Segments: 2,
		Refits:   []string{llm.ContextCut, llm.ContextRefused, llm.ContextCut},
		Outcomes: []memory.Outcome{{Kind: memory.OutcomeSuperseded, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}},
		Err:      fmt.Errorf("commit: %w", errors.New("connection reset")),
	})
	m.Extracted(extract.Report{EpisodeID: 3, Candidates: 0, PromptChars: 800,
		Err: fmt.Errorf("extraction answer: %w", llm.ErrMalformedOutput)})
	m.Extracted(extract.Report{EpisodeID: 4, Err: errors.New("episode not found")}) // before the prompt

	s := scrapeOf(t, m)
	require.Equal(t, 1.0, s.value("credo_extractions_total", "result=ok"))
	require.Equal(t, 2.0, s.value("credo_extractions_total", "result=error"))
	require.Equal(t, 1.0, s.value("credo_extractions_total", "result=malformed"))
	require.Equal(t, 4.0, s.value("credo_extraction_duration_seconds"))
	require.Equal(t, 3.0, s.value("credo_extraction_prompt_chars"))
	require.Equal(t, 4200.0+90000+800, s.sum("credo_extraction_prompt_chars"))
	require.Equal(t, 3.0, s.value("credo_extraction_candidates"))
	require.Equal(t, 33.0, s.sum("credo_extraction_candidates"))

	require.Equal(t, 2.0, s.value("credo_extraction_segments_total"))
	require.Equal(t, 2.0, s.value("credo_prompt_refits_total", "cause=cut"))
	require.Equal(t, 1.0, s.value("credo_prompt_refits_total", "cause=refused"))

	require.Equal(t, 3.0, s.value("credo_revisions_total", "action=supersede", "reason=temporal"))
	require.Equal(t, 1.0, s.value("credo_revisions_total", "action=supersede", "reason=correction"))
	require.Equal(t, 1.0, s.value("credo_revisions_total", "action=retract", "reason=temporal"))
	require.Equal(t, 2.0, s.value("credo_revisions_total", "action=reinforce", "reason=restated"))
	require.Equal(t, 7.0, s.value("credo_revisions_total"))
	require.Equal(t, 1.0, s.value("credo_conflicts_total", "action=supersede"))
	require.Equal(t, 1.0, s.value("credo_revisions_held_total", "cause=unrelated"))
	for kind, n := range map[memory.OutcomeKind]float64{
		memory.OutcomeAccepted: 1, memory.OutcomeSuperseded: 3, memory.OutcomeBackfilled: 1, memory.OutcomeRetracted: 1,
		memory.OutcomeReinforced: 1, memory.OutcomeDuplicate: 1, memory.OutcomeRejected: 1, memory.OutcomeConflict: 1,
	} {
		require.Equal(t, n, s.value("credo_belief_outcomes_total", "outcome="+string(kind)), kind)
	}
}

func TestCuratedCountsRunsBeliefsAndEpisodes(t *testing.T) {
	t.Parallel()
	m := New()
	var _ retention.Observer = m
	for _, r := range []retention.Report{
		{Scopes: 2, Beliefs: 5, Episodes: 4},
		{}, // nothing was due
		// A curation cut short: what its committed scopes removed is counted.
		{Scopes: 1, Beliefs: 2, Episodes: 1, Err: context.DeadlineExceeded},
	} {
		m.Curated(r)
	}
	s := scrapeOf(t, m)
	require.Equal(t, 2.0, s.value("credo_curate_runs_total", "result=ok"))
	require.Equal(t, 1.0, s.value("credo_curate_runs_total", "result=error"))
	require.Equal(t, 7.0, s.value("credo_curated_beliefs_total"))
	require.Equal(t, 5.0, s.value("credo_curated_episodes_total"))
}

func TestJobEventOutcomes(t *testing.T) {
	t.Parallel()
	m := New()
	job := func(state rivertype.JobState) *rivertype.JobRow {
		return &rivertype.JobRow{Kind: "credo.extract", State: state}
	}
	stats := &river.JobStatistics{RunDuration: 1500 * time.Millisecond}
	for _, e := range []*river.Event{
		{Kind: river.EventKindJobCompleted, Job: job(rivertype.JobStateCompleted), JobStats: stats},
		{Kind: river.EventKindJobCompleted, Job: job(rivertype.JobStateCompleted), JobStats: stats},
		{Kind: river.EventKindJobFailed, Job: job(rivertype.JobStateRetryable), JobStats: stats},
		{Kind: river.EventKindJobFailed, Job: job(rivertype.JobStateAvailable), JobStats: stats},
		{Kind: river.EventKindJobFailed, Job: job(rivertype.JobStateDiscarded), JobStats: stats},
		{Kind: river.EventKindJobCancelled, Job: job(rivertype.JobStateCancelled), JobStats: stats},
		{Kind: river.EventKindJobSnoozed, Job: job(rivertype.JobStateScheduled)},
		{Kind: river.EventKindJobInterrupted, Job: job(rivertype.JobStateAvailable)},
		{Kind: river.EventKindQueuePaused},
		nil,
	} {
		m.jobEvent(e)
	}
	s := scrapeOf(t, m)
	for outcome, n := range map[string]float64{
		JobCompleted: 2, JobRetried: 2, JobFailed: 1, JobCancelled: 1, JobSnoozed: 1, JobInterrupted: 1,
	} {
		require.Equal(t, n, s.value("credo_jobs_total", "kind=credo.extract", "outcome="+outcome), outcome)
	}
	require.Equal(t, 6.0, s.value("credo_job_duration_seconds", "kind=credo.extract"))
	require.InDelta(t, 9.0, s.sum("credo_job_duration_seconds"), 1e-9)
}
