package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transfer"
)

// transferSizes are the beliefs of the scope BenchmarkTransfer moves; CREDO_BENCH_TRANSFER
// sets others (comma-separated), such as 100000.
func transferSizes(b *testing.B) []int {
	sizes := benchSizes([]int{1_000, 10_000}, []int{50})
	if v := os.Getenv("CREDO_BENCH_TRANSFER"); v != "" {
		sizes = nil
		for s := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			require.NoError(b, err)
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// syntheticExport is an export of one scope of n beliefs with their history: pairs of a
// belief and the one that superseded it (n/2 supersede events), from n/10 applied
// episodes of one message each.
func syntheticExport(scope string, n int) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	must := func(v any) {
		if err := enc.Encode(v); err != nil {
			panic(err)
		}
	}
	must(memory.ExportHeader{Format: memory.ExportFormat, Version: memory.ExportVersion, ExportedAt: at, Scopes: []string{scope}})
	must(memory.ExportedScope{Type: memory.RecordScope, Scope: scope})
	episodes := max(1, n/10)
	for i := 1; i <= episodes; i++ {
		t := at.Add(time.Duration(i) * time.Hour)
		must(memory.ExportedEpisode{Type: memory.RecordEpisode, Scope: scope, ID: int64(i), ContentHash: fmt.Sprintf("h%d", i),
			Messages:   json.RawMessage(fmt.Sprintf(`[{"role":"user","content":"Conversation %d: I moved, and my cat is called Tom%d."}]`, i, i)),
			OccurredAt: t, ReceivedAt: t, State: memory.EpisodeApplied, Attempts: 1, ProcessedAt: &t})
	}
	events := 0
	for i := 1; i <= n; i++ {
		t := at.Add(time.Duration(i) * time.Minute)
		ep := int64((i-1)%episodes + 1)
		b := memory.ExportedBelief{Type: memory.RecordBelief, Scope: scope, ID: int64(i), Subject: "user", Attribute: fmt.Sprintf("slot_%d", (i+1)/2),
			Kind: memory.KindAttribute, Statement: fmt.Sprintf("User's fact number %d is value %d", (i+1)/2, i), Status: memory.StatusActive,
			Confidence: 0.9, Origin: memory.OriginUserStated, ValidFrom: t, RecordedAt: t, EpisodeID: &ep, LastSeenAt: t, UpdatedAt: t}
		if i%2 == 1 && i < n {
			next, end := int64(i+1), t.Add(time.Minute)
			b.Status, b.SupersededBy, b.ValidUntil, b.RetiredAt = memory.StatusSuperseded, &next, &end, &end
		}
		must(b)
	}
	for i := 2; i <= n; i += 2 {
		events++
		t := at.Add(time.Duration(i) * time.Minute)
		ep, newID := int64((i-1)%episodes+1), int64(i)
		stmt := fmt.Sprintf("User's fact number %d is value %d", i/2, i)
		must(memory.ExportedEvent{Type: memory.RecordEvent, Prior: json.RawMessage(`{"wrote":true}`), Event: memory.Event{Scope: scope,
			ID: int64(events), Action: memory.ActionSupersede, Reason: memory.ReasonTemporal, Origin: memory.RevisionExtraction,
			OldBeliefID: int64(i - 1), NewBeliefID: &newID, OldStatement: fmt.Sprintf("User's fact number %d is value %d", i/2, i-1),
			NewStatement: &stmt, EpisodeID: &ep, CreatedAt: t}})
	}
	counts := map[memory.RecordType]int{memory.RecordScope: 1, memory.RecordEpisode: episodes, memory.RecordBelief: n}
	if events > 0 {
		counts[memory.RecordEvent] = events
	}
	must(memory.ExportEnd{Type: memory.RecordEnd, Records: counts})
	return buf.Bytes()
}

// liveHeap samples the heap live at each garbage collection until stop is called, which
// returns the most seen above what was live when it started: what the work in between
// held, whatever garbage it made.
func liveHeap() (stop func() uint64) {
	// Collections a few percent of heap growth apart: the live heap is sampled often.
	gcPercent := debug.SetGCPercent(5)
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var (
		peak atomic.Uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		debug.SetGCPercent(gcPercent)
		return max(peak.Load(), base) - base
	}
}

// importer imports into schema with the fake embedder, in batches of reembed's default.
func importer(b *testing.B, schema *dbtest.Schema, srv *llmtest.Server) (*transfer.Importer, *memory.Store) {
	b.Helper()
	embed, err := llm.NewOllama(srv.OllamaConfig())
	require.NoError(b, err)
	// Insert-only, as `beliefs import` has: the worker runs the jobs.
	jobs, err := river.NewClient(riverpgxv5.New(schema.Pool), &river.Config{})
	require.NoError(b, err)
	store := memory.NewStore(schema.Pool, nil)
	im, err := transfer.NewImporter(transfer.Config{Store: store, Embed: embed, EmbedModel: embed.EmbedModel(), Jobs: jobs})
	require.NoError(b, err)
	return im, store
}

// BenchmarkTransfer: a scope of n beliefs with its history imported (embedded in
// batches), then exported; rows a second each way, the embedding calls of the import,
// and the most the export held in memory at once (the live heap above what was live
// before), which stays flat as the scope grows.
func BenchmarkTransfer(b *testing.B) {
	for _, n := range transferSizes(b) {
		b.Run(fmt.Sprintf("beliefs=%d", n), func(b *testing.B) {
			schema := dbtest.New(b)
			srv := llmtest.NewServer(b)
			im, store := importer(b, schema, srv)
			ctx := context.Background()
			var rows, calls, embedded int
			var importTime, exportTime time.Duration
			var exported int64
			var held uint64
			for i := range b.N {
				scope := fmt.Sprintf("bench/%d", i)
				// Made afresh each time, and dead once imported: what the export holds is
				// measured against a heap that holds little else.
				data := syntheticExport("bench", n)
				start := time.Now()
				rep, err := im.Import(ctx, bytes.NewReader(data), transfer.ImportParams{ScopeMap: []transfer.ScopeMapping{{Old: "bench", New: scope}}})
				require.Zero(b, srv.ChatCount(), "an import makes no chat call")
				srv.Reset() // the fake's log of the calls is not the export's to hold
				require.NoError(b, err)
				importTime += time.Since(start)
				s := rep.Scopes[0]
				rows += s.Beliefs + s.Events + s.Episodes
				calls += rep.EmbeddingCalls
				embedded += rep.EmbeddedRows

				export := func() int64 {
					exp, err := transfer.OpenExport(ctx, store, memory.ExportQuery{Scope: scope})
					require.NoError(b, err)
					defer exp.Close(ctx)
					cw := &countingWriter{}
					require.NoError(b, exp.WriteTo(ctx, cw))
					return cw.n
				}
				start = time.Now()
				size := export()
				exportTime += time.Since(start)
				// Again, to see what it holds: collections slow it down.
				stop := liveHeap()
				export()
				held = max(held, stop())
				exported += size
			}
			b.ReportMetric(float64(rows)/importTime.Seconds(), "import_rows/s")
			b.ReportMetric(float64(n*b.N)/importTime.Seconds(), "import_beliefs/s")
			b.ReportMetric(float64(calls)/float64(b.N), "embed_calls")
			b.ReportMetric(float64(embedded)/float64(b.N), "embedded_rows")
			b.ReportMetric(float64(rows)/exportTime.Seconds(), "export_rows/s")
			b.ReportMetric(float64(exported)/float64(b.N)/1e6, "export_MB")
			b.ReportMetric(float64(held)/1e6, "export_held_MB")
		})
	}
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

// mem0Export is mem0's get_all answer for memories of users, a hundred a user, as the
// platform writes it.
func mem0Export(users, perUser int) []byte {
	var results []map[string]any
	at := time.Date(2025, 6, 1, 9, 0, 0, 0, time.FixedZone("PDT", -7*3600))
	topics := []string{"food", "travel", "work", "hobbies", "health"}
	for u := range users {
		for m := range perUser {
			t := at.Add(time.Duration(u*perUser+m) * time.Hour)
			results = append(results, map[string]any{
				"id": fmt.Sprintf("%08x-0000-4000-8000-%012x", u, m), "memory": fmt.Sprintf("User %d mentioned detail %d about %s", u, m, topics[m%len(topics)]),
				"user_id": fmt.Sprintf("user-%d", u), "agent_id": nil, "run_id": nil, "hash": fmt.Sprintf("%032x", u*perUser+m),
				"metadata": map[string]any{"source": "chat"}, "categories": []string{topics[m%len(topics)]},
				"created_at": t.Format("2006-01-02T15:04:05.000000-07:00"), "updated_at": t.Format("2006-01-02T15:04:05.000000-07:00"),
			})
		}
	}
	data, err := json.MarshalIndent(map[string]any{"count": len(results), "next": nil, "previous": nil, "results": results}, "", "  ")
	if err != nil {
		panic(err)
	}
	return data
}

// BenchmarkImportMem0: a mem0 export of 1,000 memories for 10 users, imported in one go
// as `beliefs import --from mem0 --scope-template 'user:{user_id}'` does.
func BenchmarkImportMem0(b *testing.B) {
	schema := dbtest.New(b)
	srv := llmtest.NewServer(b)
	im, _ := importer(b, schema, srv)
	data := mem0Export(benchSize(10, 2), benchSize(100, 5))
	var took time.Duration
	var rep *transfer.Report
	for i := range b.N {
		start := time.Now()
		var err error
		rep, err = im.Import(context.Background(), bytes.NewReader(data), transfer.ImportParams{From: transfer.FromMem0,
			ScopeTemplate: fmt.Sprintf("run%d/user:{user_id}", i)})
		require.NoError(b, err)
		took += time.Since(start)
	}
	b.ReportMetric(took.Seconds()/float64(b.N), "s/import")
	b.ReportMetric(1000*float64(b.N)/took.Seconds(), "memories/s")
	b.ReportMetric(float64(len(rep.Scopes)), "scopes")
	b.ReportMetric(float64(rep.EmbeddingCalls), "embed_calls")
	b.ReportMetric(float64(rep.ConsolidationJobs), "consolidation_jobs")
}
