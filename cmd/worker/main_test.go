package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

const (
	nyc   = "User lives in New York City"
	miami = "User lives in Miami"
)

type testBundle struct {
	schema *dbtest.Schema
	llm    *llmtest.Server
	env    map[string]string
}

func setup(t *testing.T, opts ...llmtest.Option) *testBundle {
	t.Helper()
	schema := dbtest.New(t)
	srv := llmtest.NewServer(t, opts...)
	// As the compose file runs it: native Ollama.
	return &testBundle{schema: schema, llm: srv, env: map[string]string{
		"DATABASE_URL": schema.URL, "LLM_PROVIDER": "ollama", "OLLAMA_HOST": srv.URL(),
		"CHAT_MODEL": llmtest.DefaultChatModel, "EMBED_MODEL": llmtest.DefaultEmbedModel,
		"HTTP_ADDR": "127.0.0.1:0", "LOG_LEVEL": "warn",
	}}
}

func (b *testBundle) getenv(k string) string { return b.env[k] }

func (b *testBundle) episodes(t *testing.T) map[string]int {
	t.Helper()
	rows, err := b.schema.Pool.Query(context.Background(), "SELECT state, count(*) FROM episode GROUP BY state")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		require.NoError(t, rows.Scan(&state, &n))
		out[state] = n
	}
	return out
}

// moveStory scripts the fake LLM for examples/move.jsonl: New York, then Miami.
func (b *testBundle) moveStory() {
	b.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		switch {
		case strings.Contains(req.Prompt, "I live in Brooklyn"):
			return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: nyc, Attribute: "location"})}
		case strings.Contains(req.Prompt, "I moved to Miami last month"):
			f := pipelinetest.Fact{Statement: miami, Attribute: "location", ValidFrom: "2026-02-28", Quote: "I moved to Miami last month"}
			if strings.Contains(req.Prompt, "\n[0] "+nyc) {
				f.Resolves = &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}
			}
			return llmtest.Reply{Content: pipelinetest.Answer(f)}
		}
		return llmtest.Reply{Content: pipelinetest.Answer()}
	})
	// One worker takes the episodes in order, as a user's single worker would.
	b.env["WORKERS"] = "1"
}

func TestDrainAppliesAShippedExample(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.moveStory()
	ctx := context.Background()
	require.NoError(t, enqueueFile(ctx, b, "../../examples/move.jsonl"))
	var stderr bytes.Buffer
	require.NoError(t, run(ctx, []string{"--drain"}, b.getenv, &stderr, nil), stderr.String())

	require.Equal(t, map[string]int{"applied": 4}, b.episodes(t))
	require.Len(t, b.llm.Chats(), 4)
	current, err := memory.NewStore(b.schema.Pool, nil).Current(ctx, "user:ana")
	require.NoError(t, err)
	require.Len(t, current, 1)
	require.Equal(t, miami, current[0].Statement)
	require.Len(t, current[0].Supersedes, 1, "New York is history")
}

// A drain run without a terminal logs how the episodes go: at start, and when done.
func TestDrainShowsProgress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.moveStory()
	b.env["LOG_LEVEL"] = "info"
	ctx := context.Background()
	require.NoError(t, enqueueFile(ctx, b, "../../examples/move.jsonl"))
	var stderr bytes.Buffer
	require.NoError(t, run(ctx, []string{"--drain"}, b.getenv, &stderr, nil), stderr.String())
	require.Contains(t, stderr.String(), `msg="drain: extracting" pending=4`)
	require.Regexp(t, `msg="drain: progress" done=4 left=0 failed=0`, stderr.String())
	require.NotContains(t, stderr.String(), "level=ERROR")
}

func TestMetricsMoveAfterARun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.moveStory()
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, b.getenv, io.Discard, func(addr string) { addrs <- addr }) }()
	addr := <-addrs
	require.NoError(t, enqueueFile(ctx, b, "../../examples/move.jsonl"))
	require.Eventually(t, func() bool { return b.episodes(t)["applied"] == 4 }, 30*time.Second, 20*time.Millisecond)

	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		body = string(raw)
		// Job events reach the watcher asynchronously.
		return strings.Contains(body, `credo_jobs_total{kind="credo.extract_scope",outcome="completed"}`)
	}, 10*time.Second, 50*time.Millisecond, "jobs by outcome")
	for _, want := range []string{
		`credo_llm_calls_total{kind="chat",model="qwen2.5:7b",provider="ollama",result="ok"} 4`,
		`credo_revisions_total{action="supersede",reason="temporal"} 1`,
		`credo_llm_tokens_total{direction="prompt",model="qwen2.5:7b",provider="ollama"}`,
		`credo_extraction_prompt_chars_count 4`,
		`credo_extraction_stale_total 0`,
	} {
		require.Contains(t, body, want)
	}
	// Every answer of the listener is counted, the scrapes above included.
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(raw), `credo_http_responses_total{code="200"}`)
	cancel()
	require.NoError(t, <-done)
}

// enqueueFile enqueues a shipped example as cmd/enqueue does.
func enqueueFile(ctx context.Context, b *testBundle, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	ts, err := transcript.Parse(path, f, time.Now(), transcript.DefaultLimits())
	if err != nil {
		return err
	}
	jobs, err := river.NewClient(riverpgxv5.New(b.schema.Pool), &river.Config{})
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, b.schema.Pool, func(tx pgx.Tx) error {
		_, err := extract.Enqueue(ctx, tx, jobs, ts, time.Now(), nil)
		return err
	})
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, b.getenv, io.Discard, func(addr string) { addrs <- addr }) }()
	addr := <-addrs
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Equal(t, "ok", strings.TrimSpace(string(body)))
	cancel()
	require.NoError(t, <-done)
}

func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		timeout string
		// finished: the running jobs finish before the worker exits.
		finished bool
	}{
		{"RunningJobsFinish", "20s", true},
		{"RunningJobsAreHandedBack", "100ms", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, llmtest.WithLatency(1500*time.Millisecond))
			b.env["SHUTDOWN_TIMEOUT"] = tc.timeout
			ctx := context.Background()
			require.NoError(t, enqueueFile(ctx, b, "../../examples/retraction.jsonl"))

			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			var stderr syncBuffer
			go func() { done <- run(runCtx, nil, b.getenv, &stderr, nil) }()
			require.Eventually(t, func() bool { return b.llm.ChatCount() > 0 }, 20*time.Second, 10*time.Millisecond,
				"a job is waiting on the LLM")
			stop() // what SIGTERM does
			require.NoError(t, <-done, stderr.String())
			require.NotContains(t, stderr.String(), "level=ERROR", "a clean stop is not an error")

			got := b.episodes(t)
			if tc.finished {
				require.Positive(t, got["applied"], "running jobs finished: %v", got)
			} else {
				require.Zero(t, got["applied"], "running jobs were canceled: %v", got)
			}
			require.Zero(t, got["failed"])

			// Nothing was lost: a later run applies every episode.
			require.NoError(t, run(ctx, []string{"--drain"}, b.getenv, io.Discard, nil))
			require.Equal(t, map[string]int{"applied": 3}, b.episodes(t))
		})
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestJobBudgetEndsBeforeRescue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ jobTimeout, rescueAfter, want time.Duration }{
		{5 * time.Minute, 6 * time.Minute, 5*time.Minute + 30*time.Second},
		{3 * time.Second, 4 * time.Second, 3500 * time.Millisecond},
		{time.Minute, 10 * time.Minute, 9 * time.Minute},
	} {
		got := jobBudget(&config.Config{JobTimeout: tc.jobTimeout, RescueAfter: tc.rescueAfter})
		require.Equal(t, tc.want, got, "JOB_TIMEOUT %s, RESCUE_AFTER %s", tc.jobTimeout, tc.rescueAfter)
		require.Less(t, got, tc.rescueAfter, "a job ends its turn before River would rescue it")
		require.GreaterOrEqual(t, got, tc.jobTimeout, "one episode always fits")
	}
}

// Bad usage and configuration are exit code 2 in every command: here, before anything
// starts, with one line saying what is wrong.
func TestBadUsageIsAUsageError(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		env  func(string) string
		want string
	}{
		{nil, none, "DATABASE_URL"},
		{[]string{"--drian"}, none, "-drian (worker -h lists the flags)"},
		{[]string{"extra"}, func(k string) string { return map[string]string{"DATABASE_URL": "postgres://x"}[k] }, "unexpected arguments"},
		{nil, func(k string) string { return map[string]string{"DATABASE_URL": "postgres://x", "WORKERS": "many"}[k] }, "WORKERS"},
		{[]string{"--http"}, func(k string) string { return map[string]string{"DATABASE_URL": "postgres://x"}[k] }, "--http goes with --drain"},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), tc.args, tc.env, &stderr, nil)
		require.True(t, config.IsUsage(err), "%v: %v", tc.args, err)
		require.ErrorContains(t, err, tc.want)
		require.Empty(t, stderr.String(), "nothing but the error, printed once by main")
	}
}

// A first run without its models says what to fix: a drain run stops at once instead of
// retrying for hours, naming the variable.
func TestDrainChecksTheModels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, llmtest.WithModels(llmtest.DefaultEmbedModel))
	err := run(ctx, []string{"--drain"}, b.getenv, io.Discard, nil)
	require.ErrorContains(t, err, `CHAT_MODEL "`+llmtest.DefaultChatModel+`" is not pulled`)
	require.ErrorContains(t, err, "ollama pull "+llmtest.DefaultChatModel)

	b.env["OLLAMA_HOST"] = "http://127.0.0.1:1" // nothing listens there
	err = run(ctx, []string{"--drain"}, b.getenv, io.Discard, nil)
	require.ErrorContains(t, err, "no model server answers at http://127.0.0.1:1: start it, or set OLLAMA_HOST")

	// A long-running worker says it once and goes on.
	b = setup(t, llmtest.WithModels())
	var stderr bytes.Buffer
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(runCtx, nil, b.getenv, &stderr, func(string) { cancel() }) }()
	require.NoError(t, <-done)
	require.Equal(t, 1, strings.Count(stderr.String(), "model check failed"), stderr.String())
}

// A drain run serves no HTTP unless asked, so it runs beside the worker that holds
// HTTP_ADDR; with --http it serves there.
func TestDrainBesideARunningWorker(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.moveStory()
	ctx := context.Background()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	b.env["HTTP_ADDR"] = taken.Addr().String()
	require.NoError(t, enqueueFile(ctx, b, "../../examples/move.jsonl"))
	served := func(addr string) { t.Errorf("a drain run without --http served %s", addr) }
	require.NoError(t, run(ctx, []string{"--drain"}, b.getenv, io.Discard, served))
	require.Equal(t, map[string]int{"applied": 4}, b.episodes(t))

	err = run(ctx, []string{"--drain", "--http"}, b.getenv, io.Discard, nil)
	require.ErrorContains(t, err, "address already in use", "--http asks for HTTP_ADDR")

	b.env["HTTP_ADDR"] = "127.0.0.1:0"
	var addr string
	require.NoError(t, run(ctx, []string{"--drain", "--http"}, b.getenv, io.Discard, func(a string) { addr = a }))
	require.NotEmpty(t, addr, "--http serves")
}

// /dev/null is a character device but no terminal: a drain run whose stderr goes there
// logs its progress and draws no bar.
func TestDrainDrawsNoBarOnDevNull(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	require.NoError(t, enqueueFile(ctx, b, "../../examples/move.jsonl"))
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	var logs bytes.Buffer
	p, err := newDrainProgress(ctx, memory.NewStore(b.schema.Pool, nil), null, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	require.Nil(t, p.bar)
	require.Contains(t, logs.String(), `msg="drain: extracting" pending=4`)
}
