package bench_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/prompts"
)

// The scale of BenchmarkAskUnderLoad.
const (
	askClients = 16
	askScopes  = 20
	askBeliefs = 1_000 // a user's memory
	askReads   = 640   // per kind and concurrency, after askWarmup
	askWarmup  = 32
)

// BenchmarkAskUnderLoad: POST /v1/ask and GET /v1/context through the real API (HTTP,
// key check, the scope's policy, the question's embedding call, the ranked read, and
// for ask the model's answer), by one client and by 16 at once, on scopes of 1,000
// beliefs (20 of them, 64 dimensions), the model answering at once. Reported per kind
// and concurrency: p50 and p99 latency; then, from the serial run, where one ask's time
// goes, each part timed alone with the same clients: the embedding call, the ranked
// read (store.Recall as the reader asks it), and the chat call. The API's pool has
// the 16 connections the clients need, plus 4, as a worker's pool has its workers'.
func BenchmarkAskUnderLoad(b *testing.B) {
	askBeliefs, askReads, askWarmup := benchSize(askBeliefs, 20), benchSize(askReads, 16), benchSize(askWarmup, 4)
	ctx := context.Background()
	p := pipelinetest.New(b, nil)
	for s := range askScopes {
		seedBeliefs(b, p, fmt.Sprintf("user:%d", s), askBeliefs)
	}
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		if req.SchemaName == prompts.AnswerSchemaName {
			return llmtest.Reply{Content: `{"reasoning":"r","answer":"Chess.","citations":[0]}`}
		}
		return llmtest.Reply{Content: llmtest.DefaultContent}
	})
	cfg, err := pgxpool.ParseConfig(p.Schema.URL)
	require.NoError(b, err)
	cfg.MaxConns = askClients + 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(b, err)
	b.Cleanup(pool.Close)
	store := memory.NewStore(pool, nil)
	srv, err := api.New(ctx, api.Config{Store: store, Pool: pool, Jobs: p.Client, Embed: p.Provider, Chat: p.Provider,
		Addr: "127.0.0.1:0", RateLimit: -1})
	require.NoError(b, err)
	ts := httptest.NewServer(srv)
	b.Cleanup(ts.Close)
	_, key, err := api.CreateKey(ctx, pool, "bench", []string{"user:"}, []api.Right{api.RightRead})
	require.NoError(b, err)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: askClients}}

	question := func(i int) (scope, q string) {
		return fmt.Sprintf("user:%d", i%askScopes), fmt.Sprintf("which hobby like %s number %d", words[i%len(words)], i)
	}
	// do makes request i of kind; it runs on the clients' goroutines, so it returns its
	// error rather than failing the benchmark there.
	do := func(kind string, i int) error {
		scope, q := question(i)
		var (
			req *http.Request
			err error
		)
		if kind == "ask" {
			body := fmt.Sprintf(`{"scope":%q,"question":%q}`, scope, q)
			req, err = http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/ask", strings.NewReader(body))
		} else {
			req, err = http.NewRequestWithContext(ctx, http.MethodGet,
				ts.URL+"/v1/context?scope="+url.QueryEscape(scope)+"&query="+url.QueryEscape(q), nil)
		}
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%s %d: %d %s", kind, i, res.StatusCode, out)
		}
		return nil
	}
	// run makes n requests of kind from clients goroutines at once, and returns their
	// latencies, sorted.
	run := func(kind string, clients, n int) []time.Duration {
		lat := make([]time.Duration, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		next := make(chan int)
		for range clients {
			wg.Go(func() {
				for i := range next {
					start := time.Now()
					errs[i] = do(kind, i)
					lat[i] = time.Since(start)
				}
			})
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		require.NoError(b, errors.Join(errs...))
		slices.Sort(lat)
		return lat
	}
	chatsBefore := p.LLM.ChatCount()
	b.ResetTimer()
	for range b.N {
		for _, kind := range []string{"ask", "context"} {
			for _, clients := range []int{1, askClients} {
				run(kind, clients, askWarmup)
				stat := pool.Stat()
				waited, acquires := stat.AcquireDuration(), stat.AcquireCount()
				lat := run(kind, clients, askReads)
				stat = pool.Stat()
				name := fmt.Sprintf("%s_c%d", kind, clients)
				b.ReportMetric(ms(lat[len(lat)/2]), name+"_p50_ms")
				b.ReportMetric(ms(lat[len(lat)*99/100]), name+"_p99_ms")
				b.ReportMetric(ms(stat.AcquireDuration()-waited)/float64(stat.AcquireCount()-acquires), name+"_pool_wait_ms")
			}
		}
	}
	b.StopTimer()
	require.Positive(b, p.LLM.ChatCount()-chatsBefore, "the asks asked the model")

	// One ask's parts, each timed alone, serially: the median of askReads.
	part := func(name string, fn func(i int)) {
		lat := make([]time.Duration, askReads)
		for i := range lat {
			start := time.Now()
			fn(i)
			lat[i] = time.Since(start)
		}
		slices.Sort(lat)
		b.ReportMetric(ms(lat[len(lat)/2]), "part_"+name+"_p50_ms")
	}
	vecs := make([][]float32, askReads)
	part("embed", func(i int) {
		_, q := question(i)
		res, err := p.Provider.Embed(ctx, []string{q})
		require.NoError(b, err)
		vecs[i] = res.Vectors[0]
	})
	part("read", func(i int) {
		scope, q := question(i)
		_, err := store.Recall(ctx, memory.RecallQuery{Scope: scope, Text: q, Vector: vecs[i], EmbedModel: p.Provider.EmbedModel(), K: 40})
		require.NoError(b, err)
	})
	pr, err := prompts.New()
	require.NoError(b, err)
	known := make([]prompts.Known, 10)
	for i := range known {
		known[i] = prompts.Known{Statement: fmt.Sprintf("User has hobby number %d called %s", i, words[i%len(words)]),
			ValidFrom: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	}
	system, user, err := pr.Answer(prompts.Answer{Scope: "user:1", Today: time.Now(), Question: "which hobby", Beliefs: known})
	require.NoError(b, err)
	part("chat", func(int) {
		_, err := p.Provider.Chat(ctx, llm.SchemaRequest(system, user, prompts.AnswerSchemaName, prompts.AnswerSchema()))
		require.NoError(b, err)
	})
}
