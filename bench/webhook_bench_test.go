package bench_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/webhook"
)

// BenchmarkWebhooks: the LLM-bound pipeline (250 ms chat, 20 workers, 1,000 episodes over
// 250 scopes, three supersessions a scope) without a webhook and with one subscribed to
// every scope, delivered by 4 senders to a local receiver that answers 204 at once.
// Reports the episodes' rate and share of the ideal, and the deliveries: how many, their
// rate while extraction produces them. BenchmarkWebhookBacklog measures a delivery's cost.
func BenchmarkWebhooks(b *testing.B) {
	for _, subscribed := range []bool{false, true} {
		b.Run(fmt.Sprintf("webhook=%t", subscribed), func(b *testing.B) {
			const workers, senders = 20, 4
			n := benchSize(1000, 20)
			const latency = 250 * time.Millisecond
			var delivered atomic.Int64
			var lastDelivery atomic.Int64
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				delivered.Add(1)
				lastDelivery.Store(time.Now().UnixNano())
				w.WriteHeader(http.StatusNoContent)
			}))
			b.Cleanup(rc.Close)
			const key = "a benchmark key of thirty-two characters"
			opts := &pipelinetest.Options{Workers: workers, MaxConns: int32(workers + senders + 4),
				LLMOptions: []llmtest.Option{llmtest.WithLatency(latency), llmtest.WithEmbedLatency(latency / 12),
					llmtest.WithTokenizer(llmtest.ByteQuarters)},
				Announcer: changes.NewLog(changes.Config{Followers: []changes.Follower{webhook.NewDispatcher()}}),
				AddWorkers: func(ws *river.Workers, pool *pgxpool.Pool, store *memory.Store) map[string]river.QueueConfig {
					w, err := webhook.NewWorker(webhook.WorkerConfig{Pool: pool, SecretKey: key, Guard: webhook.Guard{AllowPrivate: true},
						Render: api.WebhookRenderer(store, changes.NewReader(pool))})
					require.NoError(b, err)
					river.AddWorker(ws, w)
					return map[string]river.QueueConfig{webhook.Queue: {MaxWorkers: senders}}
				}}
			p := pipelinetest.New(b, opts)
			p.LLM.Handle(cityAnswer)
			if subscribed {
				hooks, err := webhook.NewWebhooks(webhook.Config{Pool: p.Pool(), SecretKey: key, Guard: webhook.Guard{AllowPrivate: true}})
				require.NoError(b, err)
				_, _, err = hooks.Create(context.Background(), webhook.CreateParams{URL: rc.URL, ScopePrefix: ""})
				require.NoError(b, err)
			}
			eps := episodes(n, n/4)
			b.ResetTimer()
			var elapsed time.Duration
			for range b.N {
				start := time.Now()
				delivered.Store(0)
				p.Enqueue(b, eps...)
				p.Drain(b) // episodes and deliveries: every job
				elapsed += time.Since(start)
				if subscribed {
					b.ReportMetric(float64(delivered.Load()), "deliveries")
					d := time.Duration(lastDelivery.Load() - start.UnixNano())
					b.ReportMetric(float64(delivered.Load())/d.Seconds(), "deliveries/s")
				}
			}
			b.StopTimer()
			rate := float64(n*b.N) / elapsed.Seconds()
			ideal := float64(workers) / (latency + latency/12).Seconds()
			b.ReportMetric(rate, "episodes/s")
			b.ReportMetric(100*rate/ideal, "%_of_ideal")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkWebhookBacklog: a backlog of 2,000 supersessions over 100 scopes, each with a
// delivery to one webhook, sent by 1 and 4 senders to a receiver that answers 204 at
// once: deliveries per second, and a sender's wall time per delivery (River's fetch, the
// stream's lock, the body read from the feed and the rows, signing, the HTTP round trip,
// the delivery's record).
func BenchmarkWebhookBacklog(b *testing.B) {
	for _, senders := range []int{1, 4} {
		b.Run(fmt.Sprintf("senders=%d", senders), func(b *testing.B) {
			n, scopes := benchSize(2000, 40), benchSize(100, 4)
			const key = "a benchmark key of thirty-two characters"
			var delivered atomic.Int64
			done := make(chan struct{})
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if delivered.Add(1) == int64(n) {
					close(done)
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			b.Cleanup(rc.Close)
			schema := dbtest.New(b)
			store := memory.NewStore(schema.Pool, &memory.Config{Announcer: changes.NewLog(changes.Config{Followers: []changes.Follower{webhook.NewDispatcher()}})})
			hooks, err := webhook.NewWebhooks(webhook.Config{Pool: schema.Pool, SecretKey: key, Guard: webhook.Guard{AllowPrivate: true}})
			require.NoError(b, err)
			_, _, err = hooks.Create(context.Background(), webhook.CreateParams{URL: rc.URL, ScopePrefix: ""})
			require.NoError(b, err)
			ctx := context.Background()
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			prev := map[string]int64{}
			for i := range n + scopes {
				scope := fmt.Sprintf("user:%d", i%scopes)
				f := memory.Fact{Statement: fmt.Sprintf("User lives in City%d", i), Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated}
				batch := &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, At: at.Add(time.Duration(i) * time.Hour), Facts: []memory.Fact{f}}
				if id, ok := prev[scope]; ok {
					batch.Candidates = []int64{id}
					batch.Facts[0].Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
				}
				res, err := store.Apply(ctx, batch)
				require.NoError(b, err)
				prev[scope] = res.Facts[0].BeliefID
			}
			w, err := webhook.NewWorker(webhook.WorkerConfig{Pool: schema.Pool, SecretKey: key, Guard: webhook.Guard{AllowPrivate: true},
				Render: api.WebhookRenderer(store, changes.NewReader(schema.Pool))})
			require.NoError(b, err)
			workers := river.NewWorkers()
			river.AddWorker(workers, w)
			client, err := river.NewClient(riverpgxv5.New(schema.Pool), &river.Config{
				Queues: map[string]river.QueueConfig{webhook.Queue: {MaxWorkers: senders}}, Workers: workers,
				FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(b, err)
			b.ResetTimer()
			start := time.Now()
			require.NoError(b, client.Start(ctx))
			<-done
			d := time.Since(start)
			b.StopTimer()
			stop, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			require.NoError(b, client.Stop(stop))
			b.ReportMetric(float64(n)/d.Seconds(), "deliveries/s")
			b.ReportMetric(d.Seconds()*1000*float64(senders)/float64(n), "sender_ms/delivery")
			b.ReportMetric(0, "ns/op")
		})
	}
}
