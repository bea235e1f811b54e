package reliability_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// buildWorker compiles cmd/worker into a temporary directory.
func buildWorker(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	bin := filepath.Join(t.TempDir(), "worker")
	out, err := exec.Command(goBin, "build", "-o", bin, "github.com/credohq/credo/cmd/worker").CombinedOutput()
	require.NoError(t, err, "go build ./cmd/worker: %s", out)
	return bin
}

// workerRun is one database and fake LLM the worker binary runs against.
type workerRun struct {
	name   string
	bin    string
	schema *dbtest.Schema
	llm    *llmtest.Server
	log    string // the workers' stderr, appended to by every process
	starts int
}

func newWorkerRun(t *testing.T, name, bin string) *workerRun {
	t.Helper()
	r := &workerRun{name: name, bin: bin, schema: dbtest.New(t),
		llm: llmtest.NewServer(t, llmtest.WithLatency(30*time.Millisecond)),
		log: filepath.Join(t.TempDir(), name+".log")}
	r.llm.Handle(movesAnswer)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(r.log)
			t.Logf("%s worker log (last 6000 bytes):\n%s", name, b[max(0, len(b)-6000):])
		}
	})
	return r
}

func (r *workerRun) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"DATABASE_URL=" + r.schema.URL,
		"LLM_PROVIDER=openai",
		"OPENAI_BASE_URL=" + r.llm.OpenAIURL(),
		"OPENAI_API_KEY=llmtest",
		"CHAT_MODEL=" + llmtest.DefaultChatModel,
		"EMBED_MODEL=" + llmtest.DefaultEmbedModel,
		"WORKERS=8",
		"JOB_TIMEOUT=3s",
		"RESCUE_AFTER=4s",
		"MAX_ATTEMPTS=25",
		"SHUTDOWN_TIMEOUT=5s",
		// Consolidation would revise the beliefs this test compares.
		"CONSOLIDATE_INTERVAL=1000h",
	}
}

// start runs the worker in its own process group, so that it can be killed whole.
func (r *workerRun) start(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	logf, err := os.OpenFile(r.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer logf.Close()
	r.starts++
	fmt.Fprintf(logf, "=== start %d %v\n", r.starts, args)
	// HTTP_ADDR from the environment cannot be empty (empty means unset), so the flag
	// turns the HTTP server off.
	cmd := exec.Command(r.bin, append([]string{"--http-addr="}, args...)...)
	cmd.Env = r.env()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	})
	return cmd
}

// enqueue stores the episodes and their jobs as cmd/enqueue does.
func enqueue(t *testing.T, pool *pgxpool.Pool, ts []transcript.Transcript) {
	t.Helper()
	ctx := context.Background()
	jobs, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		res, err := extract.Enqueue(ctx, tx, jobs, ts, time.Now(), nil)
		if err == nil && res.Enqueued != len(ts) {
			err = fmt.Errorf("enqueued %d of %d", res.Enqueued, len(ts))
		}
		return err
	}))
}

// waitExit waits for cmd to exit 0 within timeout.
func waitExit(t *testing.T, cmd *exec.Cmd, timeout time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "worker %v", cmd.Args)
	case <-time.After(timeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		require.FailNow(t, "worker did not finish", "%v within %s", cmd.Args, timeout)
	}
}

// TestCrashSafety: a worker killed with SIGKILL at random moments of a run of 300
// episodes over 20 scopes (a backlog of 15 each, worked by per-scope jobs), restarted
// each time and finally drained, ends in exactly the state of an uninterrupted run:
// every episode applied once, no belief or revision event lost or doubled.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the worker binary; about a minute")
	}
	t.Parallel()
	const scopes, perScope = 20, 15
	bin := buildWorker(t)
	episodes := movesEpisodes(11, scopes, perScope)
	n := len(episodes)

	reference := newWorkerRun(t, "reference", bin)
	enqueue(t, reference.schema.Pool, episodes)
	refCmd := reference.start(t, "--drain")

	crashed := newWorkerRun(t, "crashed", bin)
	enqueue(t, crashed.schema.Pool, episodes)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Logf("kill seed %d", seed)
	rescuable := 0
	for kill := 1; kill <= 3; kill++ {
		cmd := crashed.start(t)
		// Kill at a random moment while the run is under way: somewhere in the k-th
		// quarter of the episodes.
		at := kill*n/4 - n/10 + rng.IntN(n/5)
		require.Eventually(t, func() bool {
			return poll(crashed.schema.Pool, "SELECT count(*) FROM episode WHERE state = 'applied'") >= at
		}, 90*time.Second, 5*time.Millisecond, "kill %d: %d episodes done", kill, at)
		require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
		_ = cmd.Wait()
		running := count(t, crashed.schema.Pool, "SELECT count(*) FROM river_job WHERE state = 'running'")
		t.Logf("kill %d after %d completed: %d jobs left running", kill, at, running)
		rescuable += running
	}
	drainStart := time.Now()
	waitExit(t, crashed.start(t, "--drain"), 150*time.Second)
	t.Logf("drain after the kills took %s", time.Since(drainStart).Round(time.Millisecond))
	waitExit(t, refCmd, 150*time.Second)

	for _, r := range []*workerRun{reference, crashed} {
		pool := r.schema.Pool
		require.Equal(t, n, count(t, pool, "SELECT count(*) FROM episode WHERE state = 'applied'"), "%s: every episode applied", r.name)
		require.Equal(t, 0, count(t, pool, "SELECT count(*) FROM river_job WHERE state NOT IN ('completed')"),
			"%s: every job completed", r.name)
		require.GreaterOrEqual(t, count(t, pool, "SELECT count(*) FROM river_job WHERE kind = 'credo.extract_scope'"), scopes,
			"%s: one job per scope at least", r.name)
		require.Equal(t, n, count(t, pool, "SELECT count(*) FROM belief"), "%s: one belief per episode", r.name)
		require.Equal(t, 0, count(t, pool, `SELECT count(*) FROM (SELECT episode_id FROM belief GROUP BY episode_id HAVING count(*) > 1) d`),
			"%s: no episode stored twice", r.name)
		require.Equal(t, 0, count(t, pool, `SELECT count(*) FROM (SELECT episode_id FROM revision_event GROUP BY episode_id HAVING count(*) > 1) d`),
			"%s: no revision applied twice", r.name)
		require.Equal(t, 0, count(t, pool, "SELECT count(*) FROM belief_conflict"), "%s", r.name)
		wantChains(t, memory.NewStore(pool, nil), episodes)
	}
	t.Logf("chat calls for %d episodes: %d uninterrupted, %d with kills", n, reference.llm.ChatCount(), crashed.llm.ChatCount())
	for _, table := range []string{"belief", "revision_event", "belief_conflict", "episode"} {
		require.Equal(t, count(t, reference.schema.Pool, "SELECT count(*) FROM "+table),
			count(t, crashed.schema.Pool, "SELECT count(*) FROM "+table), table)
	}
	scopeNames := scopesOf(episodes)
	require.Equal(t, shape(t, memory.NewStore(reference.schema.Pool, nil), scopeNames),
		shape(t, memory.NewStore(crashed.schema.Pool, nil), scopeNames))

	// The kills did interrupt jobs, and those were taken over.
	require.Positive(t, rescuable, "some kill interrupted running jobs")
	require.Positive(t, count(t, crashed.schema.Pool, `SELECT count(*) FROM river_job WHERE errors::text LIKE '%Stuck job rescued%'`),
		"jobs left running by a killed worker were rescued")
}
