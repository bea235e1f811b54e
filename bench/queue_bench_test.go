package bench_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// noopArgs is a job that does nothing: what is left is River's own work per job.
type noopArgs struct{ N int }

func (noopArgs) Kind() string { return "credo.bench_noop" }

type noopWorker struct{ river.WorkerDefaults[noopArgs] }

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// BenchmarkQueue: how many jobs per second River's one job table works when the jobs
// do nothing, with the fetch settings of cmd/worker (10 ms cooldown) and 1 or 4 clients
// of 50 workers each, as worker processes would be. It is the ceiling of the queue an
// extraction job per scope turn goes through; on Citus the table is local to the
// coordinator, so this is the coordinator's ceiling too.
func BenchmarkQueue(b *testing.B) {
	jobs := benchSize(20000, 200)
	for _, procs := range []int{1, 4} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			ctx := context.Background()
			schema := dbtest.New(b)
			done := make(chan struct{}, jobs)
			var clients []*river.Client[pgx.Tx]
			for range procs {
				cfg, err := pgxpool.ParseConfig(schema.URL)
				require.NoError(b, err)
				cfg.MaxConns = 54
				pool, err := pgxpool.NewWithConfig(ctx, cfg)
				require.NoError(b, err)
				b.Cleanup(pool.Close)
				workers := river.NewWorkers()
				river.AddWorker(workers, noopWorker{})
				client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
					Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 50}},
					Workers:           workers,
					FetchCooldown:     10 * time.Millisecond,
					FetchPollInterval: 20 * time.Millisecond,
				})
				require.NoError(b, err)
				events, cancel := client.Subscribe(river.EventKindJobCompleted)
				b.Cleanup(cancel)
				go func() {
					for range events {
						done <- struct{}{}
					}
				}()
				clients = append(clients, client)
			}
			params := make([]river.InsertManyParams, jobs)
			for i := range params {
				params[i] = river.InsertManyParams{Args: noopArgs{N: i}}
			}
			b.ResetTimer()
			var elapsed time.Duration
			for range b.N {
				_, err := clients[0].InsertManyFast(ctx, params)
				require.NoError(b, err)
				start := time.Now()
				for _, c := range clients {
					require.NoError(b, c.Start(ctx))
				}
				for range jobs {
					select {
					case <-done:
					case <-time.After(time.Minute):
						b.Fatal("jobs stopped completing")
					}
				}
				elapsed += time.Since(start)
				for _, c := range clients {
					require.NoError(b, c.Stop(ctx))
				}
			}
			b.StopTimer()
			var left int
			require.NoError(b, schema.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE state <> $1",
				rivertype.JobStateCompleted).Scan(&left))
			require.Zero(b, left, "every job completed")
			b.ReportMetric(float64(jobs*b.N)/elapsed.Seconds(), "jobs/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
