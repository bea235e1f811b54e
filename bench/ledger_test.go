package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
)

// ledger accounts for the worker time of a throughput run: workers × wall time is the
// time spent in model calls, in the rest of each episode, in each job around its
// episodes, and idle. It sees the jobs through a River worker middleware, the episodes
// through extract's Observer and the model calls through timed Chatter and Embedder.
type ledger struct {
	mu    sync.Mutex
	runs  []run
	eps   map[string][]span // by scope
	calls [2]callTotal      // chat, embed
}

type span struct{ start, end time.Time }

// run is one execution of a job's Work.
type run struct {
	span
	scope string
}

type callTotal struct {
	n int
	d time.Duration
	// dialed counts the calls that opened a connection instead of reusing one.
	dialed int
}

func newLedger() *ledger { return &ledger{eps: map[string][]span{}} }

// middleware times each job's Work.
func (l *ledger) middleware() rivertype.Middleware {
	return river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
		start := time.Now()
		err := doInner(ctx)
		end := time.Now()
		var args extract.Args
		_ = json.Unmarshal(job.EncodedArgs, &args) // other kinds keep no scope
		l.mu.Lock()
		defer l.mu.Unlock()
		l.runs = append(l.runs, run{span: span{start, end}, scope: args.Scope})
		return err
	})
}

// Extracted records an episode: it ends now and lasted rep.Duration.
func (l *ledger) Extracted(rep extract.Report) {
	end := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.eps[rep.Scope] = append(l.eps[rep.Scope], span{end.Add(-rep.Duration), end})
}

// traced returns ctx with a trace that records whether the call reused a connection,
// and a function that books the call into l.calls[i] when it returns.
func (l *ledger) traced(ctx context.Context, i int) (context.Context, func()) {
	start, reused := time.Now(), true
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	})
	return ctx, func() {
		d := time.Since(start)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.calls[i].n++
		l.calls[i].d += d
		if !reused {
			l.calls[i].dialed++
		}
	}
}

// timed wraps the model client so that its calls are timed as the worker sees them.
func (l *ledger) timed(c llm.Chatter, e llm.Embedder) (llm.Chatter, llm.Embedder) {
	return timedChat{c, l}, timedEmbed{e, l}
}

type timedChat struct {
	llm.Chatter
	l *ledger
}

func (c timedChat) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	ctx, done := c.l.traced(ctx, 0)
	defer done()
	return c.Chatter.Chat(ctx, req)
}

type timedEmbed struct {
	llm.Embedder
	l *ledger
}

func (e timedEmbed) Embed(ctx context.Context, inputs []string) (llm.EmbedResponse, error) {
	ctx, done := e.l.traced(ctx, 1)
	defer done()
	return e.Embedder.Embed(ctx, inputs)
}

// reset forgets what was recorded, before a timed iteration.
func (l *ledger) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs, l.eps, l.calls = nil, map[string][]span{}, [2]callTotal{}
}

// account is one run's worker time, by part.
type account struct {
	total time.Duration // workers × wall
	parts []part
	// The parts partition the iteration's timeline, so they add up to the total. What
	// shows that the partition is sound: episodes found in no run of their scope, and
	// the most jobs that ran at once.
	unmatched, peak, workers int
	runs                     int // of jobs' Work
	calls, dialed            int // model calls, and those that opened a connection
}

type part struct {
	name string
	d    time.Duration
}

// residual is what the parts leave of the total: nothing, unless the timestamps were
// out of order.
func (a *account) residual() time.Duration {
	r := a.total
	for _, p := range a.parts {
		r -= p.d
	}
	return r
}

// marks of one timed iteration: its start, the enqueue's end and Drain's return.
type marks struct{ start, enqueued, drained time.Time }

// account splits the worker time of one iteration. chat and embed are the fake
// server's latencies, which it sleeps on each call.
func (l *ledger) account(workers int, m marks, chat, embed time.Duration) *account {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := &account{total: time.Duration(workers) * m.drained.Sub(m.start), workers: workers, runs: len(l.runs)}
	matched := 0
	sleep := time.Duration(l.calls[0].n)*chat + time.Duration(l.calls[1].n)*embed
	calls := l.calls[0].d + l.calls[1].d
	a.calls, a.dialed = l.calls[0].n+l.calls[1].n, l.calls[0].dialed+l.calls[1].dialed
	var episodes, before, after time.Duration
	for _, r := range l.runs {
		prev := r.start
		for _, e := range l.eps[r.scope] {
			if e.start.Before(r.start) || e.end.After(r.end) {
				continue // another run's
			}
			matched++
			episodes += e.end.Sub(e.start)
			before += e.start.Sub(prev)
			prev = e.end
		}
		after += r.end.Sub(prev)
	}
	for _, eps := range l.eps {
		a.unmatched += len(eps)
	}
	a.unmatched -= matched
	a.parts = append(a.parts,
		part{"model_sleep", sleep},
		part{"model_http", calls - sleep},
		part{"episode_db_go", episodes - calls},
		part{"read_before_episode", before},
		part{"job_end", after},
	)
	return l.idle(a, workers, m)
}

// idle adds the worker time no job ran, integrated over the iteration and split into
// phases: the enqueue, the wait for the first fetch, the turnover between jobs while
// some wait, the last wave (after the last job started) and Drain's noticing the end.
func (l *ledger) idle(a *account, workers int, m marks) *account {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	first, last, end := m.drained, m.start, m.start
	for _, r := range l.runs {
		edges = append(edges, edge{r.start, 1}, edge{r.end, -1})
		if r.start.After(last) {
			last = r.start
		}
		if r.end.After(end) {
			end = r.end
		}
	}
	if r := l.runs; len(r) > 0 {
		first = slices.MinFunc(r, func(x, y run) int { return x.start.Compare(y.start) }).start
	}
	slices.SortFunc(edges, func(x, y edge) int { return x.at.Compare(y.at) })
	bounds := []part{{"idle_enqueue", 0}, {"idle_first_fetch", 0}, {"idle_turnover", 0}, {"idle_last_wave", 0}, {"idle_drain", 0}}
	phase := func(t time.Time) int {
		switch {
		case t.Before(m.enqueued):
			return 0
		case t.Before(first):
			return 1
		case t.Before(last):
			return 2
		case t.Before(end):
			return 3
		}
		return 4
	}
	// Cut the timeline at every edge and phase boundary; between cuts the number of
	// running jobs is constant.
	cuts := []time.Time{m.start, m.enqueued, first, last, end, m.drained}
	for _, e := range edges {
		cuts = append(cuts, e.at)
	}
	slices.SortFunc(cuts, func(x, y time.Time) int { return x.Compare(y) })
	running, i := 0, 0
	for k := 0; k+1 < len(cuts); k++ {
		for i < len(edges) && !edges[i].at.After(cuts[k]) {
			running += edges[i].delta
			i++
		}
		a.peak = max(a.peak, running)
		d := cuts[k+1].Sub(cuts[k])
		bounds[phase(cuts[k])].d += time.Duration(workers-running) * d
	}
	a.parts = append(a.parts, bounds...)
	return a
}

// report adds the account's parts to b's metrics as percentages of the total, and logs
// them per episode.
func (a *account) report(b *testing.B, episodes int) {
	if a.unmatched > 0 || a.peak > a.workers {
		b.Fatalf("the ledger is unsound: %d episodes outside their job, %d jobs at once for %d workers",
			a.unmatched, a.peak, a.workers)
	}
	var log strings.Builder
	fmt.Fprintf(&log, "worker time %.1f s for %d episodes in %d job runs, at most %d at once:", a.total.Seconds(),
		episodes, a.runs, a.peak)
	fmt.Fprintf(&log, " %d of %d model calls opened a connection;", a.dialed, a.calls)
	for _, p := range a.parts {
		pct := 100 * p.d.Seconds() / a.total.Seconds()
		b.ReportMetric(pct, "%"+p.name)
		fmt.Fprintf(&log, " %s %.2f%% (%.2f ms/episode)", p.name, pct, p.d.Seconds()*1000/float64(episodes))
	}
	// The idle time at the batch's edges is what a continuous stream of episodes would
	// not pay: without it, the share of the model's sleep in the rest.
	edges := time.Duration(0)
	for _, p := range a.parts {
		switch p.name {
		case "idle_enqueue", "idle_first_fetch", "idle_last_wave", "idle_drain":
			edges += p.d
		}
	}
	inner := 100 * a.parts[0].d.Seconds() / (a.total - edges).Seconds()
	b.ReportMetric(inner, "%_of_ideal_within")
	fmt.Fprintf(&log, " %.2f%% of the ideal without the batch's edges;", inner)
	res := a.residual()
	b.ReportMetric(100*res.Seconds()/a.total.Seconds(), "%residual")
	fmt.Fprintf(&log, " residual %v", res)
	b.Log(log.String())
}
