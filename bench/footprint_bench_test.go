package bench_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

// The footprint's workload: sessions of footprintTurns exchanges, each user line about
// footprintLine characters, as a chat session of LoCoMo's kind is (about 3 KB of text),
// and three facts extracted from each, one of which supersedes the scope's location.
const (
	footprintScopes   = 200
	footprintSessions = 5
	footprintTurns    = 10
	footprintLine     = 280
	footprintDim      = 768
)

// BenchmarkFootprint: the bytes a belief, a revision event and an episode take in the
// database at 768 dimensions, indexes and TOAST included, measured on tables filled by
// the pipeline itself; the capacity model in BENCHMARKS.md scales them. On Citus the
// sizes are the shards' (citus_total_relation_size), on plain PostgreSQL the table's.
func BenchmarkFootprint(b *testing.B) {
	p := pipelinetest.New(b, &pipelinetest.Options{Workers: 8, MaxConns: 12,
		LLMOptions: []llmtest.Option{llmtest.WithDim(footprintDim)}})
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		m := lives.FindStringSubmatch(req.Prompt)
		if m == nil {
			return llmtest.Reply{Content: pipelinetest.Answer()}
		}
		loc := pipelinetest.Fact{Statement: "User lives in " + m[1], Attribute: "location",
			Quote: "I live in " + m[1] + " now."}
		if c := livesCandidate.FindStringSubmatch(req.Prompt); c != nil {
			i, err := strconv.Atoi(c[1])
			require.NoError(b, err)
			loc.Resolves = &pipelinetest.Resolves{Index: i, Action: "supersede", Reason: "temporal"}
		}
		return llmtest.Reply{Content: pipelinetest.Answer(loc,
			pipelinetest.Fact{Statement: "User took up " + m[1] + " pottery classes on Saturdays", Attribute: "hobby_" + m[1],
				Kind: "preference", Quote: "I signed up for pottery classes on Saturdays."},
			pipelinetest.Fact{Statement: "User plans to visit their sister in " + m[1] + " next spring", Attribute: "plan_" + m[1],
				Kind: "plan", Quote: "I want to visit my sister next spring."})}
	})
	var ts []transcript.Transcript
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	footprintScopes, footprintSessions := benchSize(footprintScopes, 4), benchSize(footprintSessions, 2)
	for s := range footprintScopes {
		for n := range footprintSessions {
			city := fmt.Sprintf("City%c%d", 'A'+n%26, s*footprintSessions+n)
			lines := []string{fmt.Sprintf("I live in %s now.", city)}
			for t := 1; t < footprintTurns; t++ {
				lines = append(lines, chatLine(s, n, t))
			}
			ts = append(ts, pipelinetest.T(fmt.Sprintf("user:%d", s), strconv.Itoa(n),
				start.AddDate(0, 0, 7*n).Format(time.RFC3339), lines...))
		}
	}
	b.ResetTimer()
	for range b.N {
		p.Enqueue(b, ts...)
		p.Drain(b)
	}
	b.StopTimer()

	ctx := context.Background()
	var citus bool
	require.NoError(b, p.Schema.Pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')").Scan(&citus))
	sizeFn, tableFn := "pg_total_relation_size", "pg_table_size"
	if citus {
		sizeFn, tableFn = "citus_total_relation_size", "citus_table_size"
	}
	episodes := footprintScopes * footprintSessions * b.N
	var all int64
	for _, tbl := range []string{"episode", "belief", "revision_event", "belief_dependency", "belief_conflict"} {
		var rows, total, table int64
		var avgRow float64
		require.NoError(b, p.Schema.Pool.QueryRow(ctx, fmt.Sprintf(
			`SELECT count(*), coalesce(avg(pg_column_size(t.*)), 0), %s('%s'), %s('%s') FROM %s t`, sizeFn, tbl, tableFn, tbl, tbl)).
			Scan(&rows, &avgRow, &total, &table))
		all += total
		b.Logf("%s: %d rows, %.0f B per row's values, %d B in all: %d B of table and TOAST (dead rows and free space included), %d B of indexes",
			tbl, rows, avgRow, total, table, total-table)
		if rows > 0 {
			b.ReportMetric(float64(total)/float64(rows), tbl+"_B/row")
		}
		b.ReportMetric(avgRow, tbl+"_heap_B/row")
	}
	var vec float64
	require.NoError(b, p.Schema.Pool.QueryRow(ctx, "SELECT avg(pg_column_size(embedding)) FROM belief WHERE embedding IS NOT NULL").Scan(&vec))
	b.ReportMetric(vec, "belief_vector_B")
	var jobs, jobBytes int64
	require.NoError(b, p.Schema.Pool.QueryRow(ctx, "SELECT count(*), pg_total_relation_size('river_job') FROM river_job").Scan(&jobs, &jobBytes))
	b.ReportMetric(float64(jobs)/float64(episodes), "river_jobs/episode")
	if jobs > 0 {
		b.ReportMetric(float64(jobBytes)/float64(jobs), "river_job_B/job")
	}
	b.ReportMetric(float64(all)/float64(episodes), "scope_tables_B/episode")
	b.ReportMetric(0, "ns/op")
}

// livesCandidate is the scope's location among the prompt's candidates.
var livesCandidate = regexp.MustCompile(`\n\[(\d+)\] User lives in `)

// chatLine is one line of small talk of about footprintLine characters, different in
// every session so that no two episodes compress alike.
func chatLine(scope, session, turn int) string {
	w := strings.Fields("we spent the afternoon walking by the river talking about work the kids school " +
		"a new recipe for dinner the weather turning cold again and plans for the long weekend with friends")
	var sb strings.Builder
	for i := 0; sb.Len() < footprintLine; i++ {
		sb.WriteString(w[(scope*7+session*13+turn*31+i*i)%len(w)])
		sb.WriteByte(' ')
	}
	return sb.String()
}
