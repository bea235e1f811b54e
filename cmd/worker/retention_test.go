package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/retention"
)

// seedHistory stores NYC three hours ago, superseded by Miami two hours ago.
func (b *testBundle) seedHistory(t *testing.T) (nycID int64) {
	t.Helper()
	ctx := context.Background()
	ago := 3 * time.Hour
	store := memory.NewStore(b.schema.Pool, &memory.Config{Now: func() time.Time { return time.Now().Add(-ago) }})
	fact := func(statement string) memory.Fact {
		return memory.Fact{Statement: statement, Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated}
	}
	res, err := store.Apply(ctx, &memory.Batch{Scope: "user:ana", Origin: memory.RevisionExtraction, Facts: []memory.Fact{fact(nyc)}})
	require.NoError(t, err)
	nycID = res.Facts[0].BeliefID
	ago = 2 * time.Hour
	f := fact(miami)
	f.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	_, err = store.Apply(ctx, &memory.Batch{Scope: "user:ana", Origin: memory.RevisionExtraction, Candidates: []int64{nycID},
		Facts: []memory.Fact{f}})
	require.NoError(t, err)
	return nycID
}

func TestWorkerCuratesHistory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env["RETAIN_HISTORY"] = "1h"
	nycID := b.seedHistory(t)
	store := memory.NewStore(b.schema.Pool, nil)

	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, b.getenv, io.Discard, func(addr string) { addrs <- addr }) }()
	addr := <-addrs
	// The leader curates at start.
	require.Eventually(t, func() bool {
		_, err := store.Get(context.Background(), nycID)
		return err != nil
	}, 30*time.Second, 50*time.Millisecond)
	_, err := store.Get(context.Background(), nycID)
	require.ErrorIs(t, err, memory.ErrNotFound)

	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		body = string(raw)
		return strings.Contains(body, `credo_curate_runs_total{result="ok"} 1`)
	}, 10*time.Second, 50*time.Millisecond, "curations by result")
	require.Contains(t, body, "credo_curated_beliefs_total 1")
	require.Contains(t, body, "credo_curated_episodes_total 0")
	cancel()
	require.NoError(t, <-done)
}

// A curation job left by a process with RETAIN_HISTORY is worked by one without it,
// removing nothing, so that --drain still ends.
func TestDrainWorksALeftCurationJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	nycID := b.seedHistory(t)
	ctx := context.Background()
	jobs, err := river.NewClient(riverpgxv5.New(b.schema.Pool), &river.Config{})
	require.NoError(t, err)
	_, err = jobs.Insert(ctx, retention.Args{}, nil)
	require.NoError(t, err)

	var stderr bytes.Buffer
	require.NoError(t, run(ctx, []string{"--drain"}, b.getenv, &stderr, nil), stderr.String())
	old, err := memory.NewStore(b.schema.Pool, nil).Get(ctx, nycID)
	require.NoError(t, err)
	require.Equal(t, memory.StatusSuperseded, old.Status)
	var state string
	require.NoError(t, b.schema.Pool.QueryRow(ctx, "SELECT state FROM river_job WHERE kind = $1", retention.Args{}.Kind()).Scan(&state))
	require.Equal(t, "completed", state)
}
