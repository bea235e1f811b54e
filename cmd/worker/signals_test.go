package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm/llmtest"
)

// mainEnv makes the test binary run the worker's main instead of the tests, so that a
// test sends real signals to a real process.
const mainEnv = "CREDO_TEST_WORKER_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// startMain runs the worker's main in a child process with args and the bundle's
// environment; wait returns its exit code.
func startMain(t *testing.T, b *testBundle, args ...string) (p *os.Process, stderr *syncBuffer, wait func() int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	for k, v := range b.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr = &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	exited := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		if exit, ok := errors.AsType[*exec.ExitError](err); ok {
			exited <- exit.ExitCode()
			return
		}
		if err != nil {
			t.Errorf("wait for the worker: %v", err)
		}
		exited <- 0
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd.Process, stderr, func() int {
		select {
		case code := <-exited:
			return code
		case <-time.After(2 * time.Minute): // a bound, not a measure: it exits at once
			t.Fatalf("the worker did not exit: %s", stderr.String())
			return -1
		}
	}
}

// Ctrl-C during a drain says so, a second one stops at once (running jobs canceled,
// however long SHUTDOWN_TIMEOUT), and the exit code tells a script that work is left.
func TestDrainStoppedBySignals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The model never answers a chat while the drain runs: a job stays running.
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	var asked atomic.Bool
	b.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		if req.Kind == llmtest.KindChat {
			asked.Store(true)
			<-release
		}
		return llmtest.Reply{Content: llmtest.DefaultContent}
	})
	b.env["WORKERS"] = "1"
	b.env["SHUTDOWN_TIMEOUT"] = "1h"
	b.env["LOG_LEVEL"] = "info"
	ctx := context.Background()
	require.NoError(t, enqueueFile(ctx, b, "../../examples/move.jsonl"))

	p, stderr, wait := startMain(t, b, "--drain")
	require.Eventually(t, asked.Load, time.Minute, 10*time.Millisecond, "a job waits on the model: %s", stderr)
	require.NoError(t, p.Signal(syscall.SIGINT))
	require.Eventually(t, func() bool {
		return contains(stderr, `msg="stopping: running jobs finish first; a second signal stops at once" signal=SIGINT`)
	}, time.Minute, 10*time.Millisecond, "the first signal is logged: %s", stderr)
	require.NoError(t, p.Signal(syscall.SIGINT))
	require.Equal(t, config.ExitInterrupted, wait(), stderr.String())
	require.Contains(t, stderr.String(), `msg="stopping at once: running jobs are canceled and handed back" signal=SIGINT`)
	require.Contains(t, stderr.String(), "worker: interrupted (stopped by SIGINT) with work left: 4 episodes pending; run it again to finish")
	require.Equal(t, map[string]int{"pending": 4}, b.episodes(t))

	// Nothing was lost: a drain that runs to its end applies every episode and exits 0.
	unblock()
	b.moveStory()
	_, stderr, wait = startMain(t, b, "--drain")
	require.Zero(t, wait(), stderr.String())
	require.Equal(t, map[string]int{"applied": 4}, b.episodes(t))
}

// A drain stopped once nothing is left to do exits 0: the stop cut nothing short, and
// its own cancellation is no failure.
func TestDrainStoppedWithNothingLeftExitsZero(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env["LOG_LEVEL"] = "info"
	signals := make(chan os.Signal, 1)
	var stderr syncBuffer
	// Sent once HTTP serves, before the drain reads its backlog, as a Ctrl-C at the end
	// of a short drain lands.
	err := runSignaled(context.Background(), signals, []string{"--drain", "--http"}, b.getenv, &stderr,
		func(string) {
			signals <- syscall.SIGTERM
			// Logged once the run's context is canceled (a bound, not a measure).
			for deadline := time.Now().Add(time.Minute); !contains(&stderr, "signal=SIGTERM") && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
		})
	require.NoError(t, err, stderr.String())
	require.Contains(t, stderr.String(), "signal=SIGTERM")
}

// A long-running worker stopped by SIGTERM says so, and exits 0.
func TestWorkerLogsItsStopSignal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env["LOG_LEVEL"] = "info"
	p, stderr, wait := startMain(t, b)
	require.Eventually(t, func() bool { return contains(stderr, `msg="worker started"`) }, time.Minute, 10*time.Millisecond)
	require.NoError(t, p.Signal(syscall.SIGTERM))
	require.Zero(t, wait(), stderr.String())
	require.Contains(t, stderr.String(), `msg="stopping: running jobs finish first; a second signal stops at once" signal=SIGTERM`)
}

func contains(b *syncBuffer, s string) bool { return strings.Contains(b.String(), s) }
