package bench_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/learning"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

var lives = regexp.MustCompile(`I live in ([A-Za-z0-9]+)`)

// cityAnswer answers like a model would for "I live in CITY": one location fact, quoting
// the words, that supersedes the location candidate shown, if any.
func cityAnswer(req llmtest.Request) llmtest.Reply {
	m := lives.FindStringSubmatch(req.Prompt)
	if m == nil {
		return llmtest.Reply{Content: pipelinetest.Answer()}
	}
	f := pipelinetest.Fact{Statement: "User lives in " + m[1], Attribute: "location", Quote: m[0]}
	if i := strings.Index(req.Prompt, "\n[0] User lives in "); i >= 0 {
		f.Resolves = &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}
	}
	return llmtest.Reply{Content: pipelinetest.Answer(f)}
}

func episodes(n, scopes int) []transcript.Transcript {
	ts := make([]transcript.Transcript, n)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range ts {
		at := start.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
		ts[i] = pipelinetest.T(fmt.Sprintf("user:%d", i%scopes), strconv.Itoa(i), at, fmt.Sprintf("I live in City%c%d now.", 'A'+i%26, i))
	}
	return ts
}

// BenchmarkCostPerEpisode: LLM calls and tokens per episode, over a realistic mix of new
// facts and revisions in scopes that accumulate history (and so few-shot examples).
func BenchmarkCostPerEpisode(b *testing.B) {
	obs := &pipelinetest.Reports{}
	p := pipelinetest.New(b, &pipelinetest.Options{Workers: 4, Extract: func(c *extract.Config) {
		c.Observer = obs
		c.Examples = learning.NewRetriever(c.Store, 0, "")
	}})
	p.LLM.Handle(cityAnswer)
	n := benchSize(400, 8)
	b.ResetTimer()
	for range b.N {
		p.Enqueue(b, episodes(n, 20)...)
		p.Drain(b)
	}
	b.StopTimer()
	reports := obs.All()
	eps := float64(len(reports))
	var chars, ptoks, ctoks, cands, examples int
	for _, r := range reports {
		chars += r.PromptChars
		ptoks += r.Usage.PromptTokens
		ctoks += r.Usage.CompletionTokens
		cands += r.Candidates
		examples += r.Examples
	}
	b.ReportMetric(float64(p.LLM.ChatCount())/eps, "chat_calls/episode")
	b.ReportMetric(float64(p.LLM.EmbedCount())/eps, "embed_calls/episode")
	b.ReportMetric(float64(chars)/eps, "prompt_chars/episode")
	b.ReportMetric(float64(ptoks)/eps, "prompt_tokens/episode")
	b.ReportMetric(float64(ctoks)/eps, "completion_tokens/episode")
	b.ReportMetric(float64(examples)/eps, "examples/episode")
	b.ReportMetric(0, "ns/op")
}

// seedBeliefs stores n active beliefs with vectors in scope, in bulk.
func seedBeliefs(b *testing.B, p *pipelinetest.Pipeline, scope string, n int) {
	b.Helper()
	ctx := context.Background()
	model := p.Provider.EmbedModel()
	rows := make([][]any, 0, n)
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	for i := range n {
		s := fmt.Sprintf("User has hobby number %d called %s", i, randomWord(rng))
		rows = append(rows, []any{scope, "user", fmt.Sprintf("hobby_%d", i), "preference", s, 0.9, "user_stated",
			time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Now(), time.Now(),
			vectorText(llmtest.Embed(s, llmtest.DefaultDim)), model})
	}
	// The model's index is built once over the rows, as a long-lived scope would have it.
	for start := 0; start < len(rows); start += 10000 {
		batch := rows[start:min(start+10000, len(rows))]
		cols := make([][]any, 12)
		for _, r := range batch {
			for j := range cols {
				cols[j] = append(cols[j], r[j])
			}
		}
		_, err := p.Schema.Pool.Exec(ctx, `INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin,
				valid_from, recorded_at, last_seen_at, embedding, embed_model)
			SELECT s, su, a, k, st, c, o, vf, ra, ls, e::vector, m
			FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::text[],
				$8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::text[])
				AS u(s, su, a, k, st, c, o, vf, ra, ls, e, m)`,
			strs(cols[0]), strs(cols[1]), strs(cols[2]), strs(cols[3]), strs(cols[4]), floats(cols[5]), strs(cols[6]),
			times(cols[7]), times(cols[8]), times(cols[9]), strs(cols[10]), strs(cols[11]))
		require.NoError(b, err)
	}
	require.NoError(b, p.Store.EnsureEmbeddingModel(ctx, model, llmtest.DefaultDim))
	_, err := p.Schema.Pool.Exec(ctx, "ANALYZE belief")
	require.NoError(b, err)
}

func strs(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = x.(string)
	}
	return out
}

func floats(v []any) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x.(float64)
	}
	return out
}

func times(v []any) []time.Time {
	out := make([]time.Time, len(v))
	for i, x := range v {
		out[i] = x.(time.Time)
	}
	return out
}

func vectorText(v []float32) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%g", x)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

var words = strings.Fields("chess climbing pottery sailing baking running knitting fishing gardening painting cycling chess surfing archery")

func randomWord(rng *rand.Rand) string { return words[rng.IntN(len(words))] }

// BenchmarkPromptSize: the extraction prompt of one transcript in a scope holding 10,
// 1,000 and 100,000 beliefs.
func BenchmarkPromptSize(b *testing.B) {
	for _, n := range benchSizes([]int{10, 1000, 100000}, []int{10}) {
		b.Run(fmt.Sprintf("beliefs=%d", n), func(b *testing.B) {
			obs := &pipelinetest.Reports{}
			p := pipelinetest.New(b, &pipelinetest.Options{Extract: func(c *extract.Config) { c.Observer = obs }})
			seedBeliefs(b, p, "user:1", n)
			b.ResetTimer()
			for i := range b.N {
				p.Enqueue(b, pipelinetest.T("user:1", strconv.Itoa(i), "2026-03-01T10:00:00Z",
					fmt.Sprintf("These days I mostly spend weekends on pottery and sailing (%d).", i)))
				p.Drain(b)
			}
			b.StopTimer()
			reports := obs.All()
			r := reports[len(reports)-1]
			b.ReportMetric(float64(r.PromptChars), "prompt_chars")
			b.ReportMetric(float64(r.Candidates), "candidates")
		})
	}
}

// BenchmarkThroughput: episodes per second from enqueue to applied, with a zero-latency
// LLM (pipeline overhead) and with 250 ms of chat latency (20 ms for embeddings), over
// many scopes of a few episodes each. Each River client has a pool of WORKERS + 4
// connections, as cmd/worker sizes it; procs > 1 runs that many clients on one
// database, as that many worker processes would.
func BenchmarkThroughput(b *testing.B) {
	cases := []struct {
		latency time.Duration
		workers int
		procs   int
		n       int
	}{
		{0, 8, 1, 2000},
		{250 * time.Millisecond, 20, 1, 1000},
		{250 * time.Millisecond, 50, 1, 2000},
		{250 * time.Millisecond, 16, 1, 800},
		{250 * time.Millisecond, 16, 2, 1600},
		{250 * time.Millisecond, 16, 4, 3200},
	}
	// At tiny sizes: one case without latency, one with, and one of several processes.
	cases = benchCases(cases, 0, 1, 4)
	for _, tc := range cases {
		name := fmt.Sprintf("llm=%s/workers=%d/procs=%d", tc.latency, tc.workers, tc.procs)
		b.Run(name, func(b *testing.B) {
			// The ledger accounts for the worker time of the runs with a model latency.
			l := newLedger()
			// The fake counts tokens by bytes: a real tokenizer's work in it would be
			// counted as the pipeline's.
			opts := &pipelinetest.Options{Workers: tc.workers, MaxConns: int32(tc.workers + 4),
				LLMOptions: []llmtest.Option{llmtest.WithLatency(tc.latency), llmtest.WithEmbedLatency(tc.latency / 12),
					llmtest.WithTokenizer(llmtest.ByteQuarters)}}
			if tc.latency > 0 {
				opts.Middleware = []rivertype.Middleware{l.middleware()}
				opts.Extract = func(c *extract.Config) {
					c.Observer = l
					c.Chat, c.Embed = l.timed(c.Chat, c.Embed)
				}
			}
			p := pipelinetest.New(b, opts)
			for range tc.procs - 1 {
				p.AddClient(b)
			}
			p.LLM.Handle(cityAnswer)
			// Many users, a few episodes each: the pipeline's concurrency is across scopes.
			tc.n = benchSize(tc.n, 16)
			eps := episodes(tc.n, tc.n/4)
			b.ResetTimer()
			var elapsed, enqueueing time.Duration
			var accounts []*account
			for range b.N {
				l.reset()
				var m marks
				m.start = time.Now()
				p.Enqueue(b, eps...)
				m.enqueued = time.Now()
				p.Drain(b)
				m.drained = time.Now()
				enqueueing += m.enqueued.Sub(m.start)
				elapsed += m.drained.Sub(m.start)
				accounts = append(accounts, l.account(tc.workers*tc.procs, m, tc.latency, tc.latency/12))
			}
			b.StopTimer()
			if tc.latency > 0 && b.N == 1 {
				accounts[0].report(b, tc.n)
			}
			rate := float64(tc.n*b.N) / elapsed.Seconds()
			b.ReportMetric(rate, "episodes/s")
			b.ReportMetric(enqueueing.Seconds()/float64(b.N), "enqueue_s")
			if tc.latency > 0 {
				// The ideal the model allows: every worker always waiting on the model,
				// one chat and one embedding call per episode.
				perEpisode := tc.latency + tc.latency/12
				ideal := float64(tc.workers*tc.procs) / perEpisode.Seconds()
				b.ReportMetric(100*rate/ideal, "%_of_ideal")
			}
			b.ReportMetric(float64(p.LLM.ChatCount())/float64(tc.n*b.N), "chat_calls/episode")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkBulkImport: a user's history imported at once, as LoCoMo's is: 10 scopes of
// 27 dated sessions each, enqueued in shuffled order and drained by 8 workers against a
// model with latency. Every episode must cost one chat call and at most one embedding
// call, each scope's sessions extracted in conversation order.
func BenchmarkBulkImport(b *testing.B) {
	scopes, sessions := benchSize(10, 2), benchSize(27, 3)
	obs := &pipelinetest.Reports{}
	p := pipelinetest.New(b, &pipelinetest.Options{Workers: 8, MaxConns: 12,
		LLMOptions: []llmtest.Option{llmtest.WithLatency(30 * time.Millisecond), llmtest.WithEmbedLatency(5 * time.Millisecond)},
		Extract: func(c *extract.Config) {
			c.Observer = obs
			c.Examples = learning.NewRetriever(c.Store, 0, "")
		}})
	var mu sync.Mutex
	order := map[string][]int{}
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		if m := session.FindStringSubmatch(req.Prompt); m != nil {
			n, _ := strconv.Atoi(m[2])
			mu.Lock()
			order[m[1]] = append(order[m[1]], n)
			mu.Unlock()
		}
		return cityAnswer(req)
	})
	var ts []transcript.Transcript
	for s := range scopes {
		for n := range sessions {
			at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7*n).Format(time.RFC3339)
			scope := fmt.Sprintf("conv-%d", s)
			ts = append(ts, pipelinetest.T(scope, strconv.Itoa(n), at,
				fmt.Sprintf("Session %s#%d. I live in City%c%d now.", scope, n, 'A'+n%26, n)))
		}
	}
	rand.New(rand.NewPCG(5, 5)).Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	elapsed := timedImport(b, p, ts)
	eps := float64(len(ts) * b.N)
	outOfOrder := 0
	require.Len(b, order, scopes, "every scope's calls were seen")
	for _, calls := range order {
		if !slices.IsSorted(calls) {
			outOfOrder++
		}
	}
	b.ReportMetric(float64(p.LLM.ChatCount())/eps, "chat_calls/episode")
	b.ReportMetric(float64(p.LLM.EmbedCount())/eps, "embed_calls/episode")
	b.ReportMetric(float64(obs.StaleRounds()), "stale_total")
	b.ReportMetric(float64(outOfOrder), "scopes_out_of_order")
	// Every answer is a correct model's: the containment guards hold none of them.
	var held int
	require.NoError(b, p.Schema.Pool.QueryRow(context.Background(),
		"SELECT count(*) FROM belief_conflict WHERE cause IN ('unrelated', 'ungrounded', 'mass_revision')").Scan(&held))
	b.ReportMetric(float64(held), "held_total")
	b.ReportMetric(eps/elapsed.Seconds(), "episodes/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSingleScopeBacklog: one user's backlog of 500 episodes with 8 workers and
// a zero-latency model: the scope is worked one episode at a time whatever the worker
// count, and the cost of sequencing is the job's turns (none while no other job waits).
func BenchmarkSingleScopeBacklog(b *testing.B) {
	n := benchSize(500, 10)
	p := pipelinetest.New(b, &pipelinetest.Options{Workers: 8, MaxConns: 12})
	p.LLM.Handle(cityAnswer)
	ts := episodes(n, 1)
	elapsed := timedImport(b, p, ts)
	var turns int
	require.NoError(b, p.Schema.Pool.QueryRow(context.Background(),
		`SELECT coalesce(sum(1 + coalesce((metadata->>'snoozes')::int, 0)), 0) FROM river_job WHERE kind = 'credo.extract_scope'`).Scan(&turns))
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "episodes/s")
	b.ReportMetric(float64(turns)/float64(n*b.N), "job_fetches/episode")
	b.ReportMetric(float64(p.LLM.ChatCount())/float64(n*b.N), "chat_calls/episode")
	b.ReportMetric(0, "ns/op")
}

// timedImport enqueues ts and drains them b.N times, and returns the time it took.
func timedImport(b *testing.B, p *pipelinetest.Pipeline, ts []transcript.Transcript) time.Duration {
	b.Helper()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		p.Enqueue(b, ts...)
		p.Drain(b)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	return elapsed
}

var session = regexp.MustCompile(`Session (\S+)#(\d+)\.`)

// BenchmarkReadLatency: current beliefs of one scope of 10,000 (among 200,000 in the
// database) ranked by a query vector, top 10.
func BenchmarkReadLatency(b *testing.B) {
	p := pipelinetest.New(b, nil)
	ctx := context.Background()
	for s := range 20 {
		seedBeliefs(b, p, fmt.Sprintf("user:%d", s), benchSize(10000, 20))
	}
	model := p.Provider.EmbedModel()
	queries := make([][]float32, 200)
	for i := range queries {
		queries[i] = llmtest.Embed(fmt.Sprintf("which hobby like %s number %d", words[i%len(words)], i), llmtest.DefaultDim)
	}
	// Latency percentiles need many reads whatever b.N is.
	reads := benchSize(2000, 20)
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		for i := range reads {
			start := time.Now()
			got, err := p.Store.Nearest(ctx, "user:7", model, queries[i%len(queries)], 10)
			lat = append(lat, time.Since(start))
			require.NoError(b, err)
			require.Len(b, got, 10)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
	// The plan of the statement the read runs: the scope's exact scan.
	b.Logf("plan: %s", strings.Join(explainNearest(b, p.Schema.URL, "user:7", model, queries[0], 10), " | "))
}
