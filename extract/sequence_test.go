package extract_test

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

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

// conversation marks a transcript with its scope and its place in the scope's
// conversation, so that the fake model can tell which call is which.
var conversation = regexp.MustCompile(`In conversation (\S+)#(\d+) I live in (\S+)\.`)

// move is a transcript of scope in which the user says they live in the n-th city, on
// day n of 2026.
func move(scope string, n int) transcript.Transcript {
	at := time.Date(2026, 1, n, 10, 0, 0, 0, time.UTC).Format(time.RFC3339)
	return pipelinetest.T(scope, fmt.Sprintf("%s-%d", scope, n), at,
		fmt.Sprintf("In conversation %s#%d I live in City%d.", scope, n, n))
}

// moves is the transcripts of days 1..n of scope.
func moves(scope string, n int) []transcript.Transcript {
	var ts []transcript.Transcript
	for day := 1; day <= n; day++ {
		ts = append(ts, move(scope, day))
	}
	return ts
}

// callLog is a fake model that answers move transcripts like a model would (a location
// that supersedes the one shown) after latency, and records the order of the calls and
// how many of each scope were under way at once.
type callLog struct {
	latency time.Duration
	// slow, when set, holds back the first call of one conversation.
	slow      string
	slowDelay time.Duration

	mu          sync.Mutex
	calls       []string // scope#n, in the order the calls started
	inflight    map[string]int
	maxInflight map[string]int
	// besides counts calls that started while a call of another scope was under way.
	besides int
}

func newCallLog(latency time.Duration) *callLog {
	return &callLog{latency: latency, inflight: map[string]int{}, maxInflight: map[string]int{}}
}

func (l *callLog) handle(req llmtest.Request) llmtest.Reply {
	m := conversation.FindStringSubmatch(req.Prompt)
	if m == nil {
		return llmtest.Reply{Content: pipelinetest.Answer()}
	}
	scope, key := m[1], m[1]+"#"+m[2]
	delay := l.latency
	l.mu.Lock()
	if key == l.slow && !containsStr(l.calls, key) {
		delay = l.slowDelay
	}
	l.calls = append(l.calls, key)
	for s, n := range l.inflight {
		if s != scope && n > 0 {
			l.besides++
			break
		}
	}
	l.inflight[scope]++
	l.maxInflight[scope] = max(l.maxInflight[scope], l.inflight[scope])
	l.mu.Unlock()

	time.Sleep(delay)

	l.mu.Lock()
	l.inflight[scope]--
	l.mu.Unlock()
	f := pipelinetest.Fact{Statement: "User lives in " + m[3], Attribute: "location", Quote: "I live in " + m[3],
		ValidFrom: "2026-01-" + fmt.Sprintf("%02s", m[2])}
	if strings.Contains(req.Prompt, "\n[0] User lives in ") {
		f.Resolves = &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}
	}
	return llmtest.Reply{Content: pipelinetest.Answer(f)}
}

func containsStr(xs []string, x string) bool {
	return slices.Contains(xs, x)
}

// callsOf lists the numbers of scope's calls, in the order they started.
func (l *callLog) callsOf(scope string) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int
	for _, c := range l.calls {
		s, n, _ := strings.Cut(c, "#")
		if s == scope {
			i, _ := strconv.Atoi(n)
			out = append(out, i)
		}
	}
	return out
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// wantChain checks that scope holds the cities of days 1..n as one supersession chain
// in day order, the last one current.
func wantChain(t *testing.T, store *memory.Store, scope string, n int) {
	t.Helper()
	all, err := store.All(context.Background(), scope)
	require.NoError(t, err)
	require.Len(t, all, n, scope)
	byFrom := map[int]memory.Belief{}
	for _, b := range all {
		byFrom[b.ValidFrom.Day()] = b
	}
	for day := 1; day <= n; day++ {
		b, ok := byFrom[day]
		require.True(t, ok, "%s: day %d", scope, day)
		require.Equal(t, fmt.Sprintf("User lives in City%d", day), b.Statement)
		if day == n {
			require.Equal(t, memory.StatusActive, b.Status, "%s: the last city is current", scope)
			continue
		}
		require.Equal(t, memory.StatusSuperseded, b.Status, "%s: day %d", scope, day)
		require.Equal(t, []int64{byFrom[day+1].ID}, b.SupersededBy, "%s: day %d is followed by day %d", scope, day, day+1)
	}
}

// TestScopeEpisodesInConversationOrder: eight episodes of one scope enqueued in shuffled
// order beside three other scopes, with eight workers: one chat call per episode, the
// scope's calls in conversation order and never two at once, the other scopes worked
// beside it, and no extraction done twice.
func TestScopeEpisodesInConversationOrder(t *testing.T) {
	t.Parallel()
	log := newCallLog(40 * time.Millisecond)
	stale := &pipelinetest.Reports{}
	p := pipelinetest.New(t, &pipelinetest.Options{Workers: 8, Extract: func(c *extract.Config) { c.Observer = stale }})
	p.LLM.Handle(log.handle)

	ts := moves("user:big", 8)
	for _, s := range []string{"user:x", "user:y", "user:z"} {
		ts = append(ts, move(s, 1), move(s, 2))
	}
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	p.Enqueue(t, ts...)
	p.Drain(t)

	require.Equal(t, 14, p.LLM.ChatCount(), "one chat call per episode")
	require.LessOrEqual(t, p.LLM.EmbedCount(), 14, "at most one embedding call per episode")
	require.Equal(t, seq(1, 8), log.callsOf("user:big"), "the scope's episodes in conversation order")
	require.Equal(t, 1, log.maxInflight["user:big"], "never two extractions of the scope at once")
	require.Positive(t, log.besides, "other scopes were worked beside it")
	require.Zero(t, stale.StaleRounds(), "nothing extracted twice")
	wantChain(t, p.Store, "user:big", 8)
	for _, s := range []string{"user:x", "user:y", "user:z"} {
		require.Equal(t, seq(1, 2), log.callsOf(s))
		wantChain(t, p.Store, s, 2)
	}
	require.Zero(t, countRows(t, p, "SELECT count(*) FROM episode WHERE state <> 'applied'"))
}

// TestTwoWorkerProcessesShareTheWork: two River clients, each with its own pool, on one
// database, over many scopes: one chat call per episode, both clients work, and the
// final state is that of a single worker.
func TestTwoWorkerProcessesShareTheWork(t *testing.T) {
	t.Parallel()
	const scopes, perScope = 12, 5
	var ts []transcript.Transcript
	for s := range scopes {
		for n := 1; n <= perScope; n++ {
			ts = append(ts, move(fmt.Sprintf("user:%02d", s), n))
		}
	}
	rand.New(rand.NewPCG(3, 3)).Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })

	run := func(clients int) (*pipelinetest.Pipeline, *callLog) {
		log := newCallLog(10 * time.Millisecond)
		p := pipelinetest.New(t, &pipelinetest.Options{Workers: 4})
		for range clients - 1 {
			p.AddClient(t)
		}
		p.LLM.Handle(log.handle)
		p.Enqueue(t, ts...)
		p.Drain(t)
		return p, log
	}
	single, _ := run(1)
	dual, log := run(2)

	require.Equal(t, len(ts), dual.LLM.ChatCount(), "one chat call per episode")
	require.Equal(t, 2, countRows(t, dual, "SELECT count(DISTINCT c) FROM river_job, unnest(attempted_by) AS c"),
		"both clients worked")
	for s := range scopes {
		scope := fmt.Sprintf("user:%02d", s)
		require.Equal(t, 1, log.maxInflight[scope], scope)
		require.Equal(t, seq(1, perScope), log.callsOf(scope), scope)
		wantChain(t, dual.Store, scope, perScope)
		require.Equal(t, shapeOf(t, single.Store, scope), shapeOf(t, dual.Store, scope), scope)
	}
}

// shapeOf is what a scope holds, without ids and known times.
func shapeOf(t *testing.T, store *memory.Store, scope string) []string {
	t.Helper()
	all, err := store.All(context.Background(), scope)
	require.NoError(t, err)
	var out []string
	for _, b := range all {
		until := "-"
		if b.ValidUntil != nil {
			until = b.ValidUntil.Format(time.DateOnly)
		}
		out = append(out, fmt.Sprintf("%s|%s|%s|%s", b.Statement, b.Status, b.ValidFrom.Format(time.DateOnly), until))
	}
	return out
}

// TestLongBacklogYieldsToOtherScopes: with one worker, a scope with a backlog gives way
// after a batch, so that a scope enqueued with it is not kept waiting for the whole
// backlog.
func TestLongBacklogYieldsToOtherScopes(t *testing.T) {
	t.Parallel()
	log := newCallLog(0)
	p := pipelinetest.New(t, &pipelinetest.Options{Workers: 1, Extract: func(c *extract.Config) { c.Batch = 2 }})
	p.LLM.Handle(log.handle)
	ts := moves("user:a", 6)
	p.Enqueue(t, append(ts, move("user:b", 1))...)
	p.Drain(t)

	log.mu.Lock()
	calls := log.calls
	log.mu.Unlock()
	require.Equal(t, []string{"user:a#1", "user:a#2", "user:b#1", "user:a#3", "user:a#4", "user:a#5", "user:a#6"}, calls)
	wantChain(t, p.Store, "user:a", 6)
	require.Equal(t, 0, countRows(t, p, "SELECT count(*) FROM river_job WHERE state <> 'completed'"))
}

// TestLoneBacklogKeepsItsWorker: with no other job waiting, a backlog is not cut into
// turns: each snooze would only wait for River's next fetch.
func TestLoneBacklogKeepsItsWorker(t *testing.T) {
	t.Parallel()
	log := newCallLog(0)
	p := pipelinetest.New(t, &pipelinetest.Options{Workers: 2, Extract: func(c *extract.Config) { c.Batch = 2 }})
	p.LLM.Handle(log.handle)
	ts := moves("user:1", 7)
	p.Enqueue(t, ts...)
	p.Drain(t)
	require.Equal(t, seq(1, 7), log.callsOf("user:1"))
	require.Equal(t, 0, countRows(t, p, "SELECT count(*) FROM river_job WHERE metadata ? 'snoozes'"), "never snoozed")
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM river_job WHERE state = 'completed' AND attempt = 1"))
}

// TestEpisodeTimeoutBoundsOneEpisode: JOB_TIMEOUT bounds each episode, not the backlog:
// a job works five episodes that together take longer than it, and the one episode
// that outlasts it fails that attempt alone and is tried again in its place.
func TestEpisodeTimeoutBoundsOneEpisode(t *testing.T) {
	t.Parallel()
	// Wide margins: each ordinary episode takes well under the timeout even on a loaded
	// CI machine, five of them take longer than it, and the slow one far longer. On
	// Citus every statement is a hop to a worker node: the margins are three times wider.
	scale := 1
	if dbtest.Citus(t) {
		scale = 3
	}
	log := newCallLog(time.Duration(scale*300) * time.Millisecond)
	log.slow, log.slowDelay = "user:1#3", time.Duration(scale*4)*time.Second
	p := pipelinetest.New(t, &pipelinetest.Options{Workers: 2, Extract: func(c *extract.Config) {
		c.EpisodeTimeout = time.Duration(scale) * time.Second
	}})
	p.LLM.Handle(log.handle)
	ts := moves("user:1", 5)
	res := p.Enqueue(t, ts...)
	p.Drain(t)

	require.Equal(t, []int{1, 2, 3, 3, 4, 5}, log.callsOf("user:1"), "the slow episode is tried again before the later ones")
	wantChain(t, p.Store, "user:1", 5)
	for i, id := range res.EpisodeIDs {
		want := 1
		if i == 2 {
			want = 2
		}
		require.Equal(t, want, p.Episode(t, id).Attempts, "episode %d", i+1)
	}
}

// TestOlderEpisodeIsPlacedByTimeOrder: an episode older than what its scope already
// applied is still extracted, and the engine places it in the chain by valid time.
func TestOlderEpisodeIsPlacedByTimeOrder(t *testing.T) {
	t.Parallel()
	log := newCallLog(0)
	p := pipelinetest.New(t, nil)
	p.LLM.Handle(log.handle)
	p.Enqueue(t, move("user:1", 1), move("user:1", 3))
	p.Drain(t)
	p.Enqueue(t, move("user:1", 2))
	p.Drain(t)

	require.Equal(t, []int{1, 3, 2}, log.callsOf("user:1"))
	wantChain(t, p.Store, "user:1", 3)
}

// TestEnqueueRacingTheJobsEndLeavesNothingBehind: episodes enqueued one at a time by
// several writers while the scopes' jobs run and finish: every one is extracted, once.
func TestEnqueueRacingTheJobsEndLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	log := newCallLog(0)
	p := pipelinetest.New(t, &pipelinetest.Options{Workers: 4})
	p.LLM.Handle(log.handle)
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				n := w*each + i + 1
				tr := move(fmt.Sprintf("user:%d", n%2), n%28+1)
				tr.ID = strconv.Itoa(n)
				tr.Messages[0].Content = fmt.Sprintf("In conversation user:%d#%d I live in City%d. (%d)", n%2, n%28+1, n%28+1, n)
				p.Enqueue(t, tr)
			}
		})
	}
	wg.Wait()
	p.Drain(t)
	require.Equal(t, writers*each, countRows(t, p, "SELECT count(*) FROM episode WHERE state = 'applied'"),
		"no episode was left without a job")
	require.Equal(t, writers*each, p.LLM.ChatCount())
}

// TestJobsOfEarlierVersionsAreHandedOn: a per-episode job left in the queue by an
// earlier version, and an episode with no job at all, are both extracted.
func TestJobsOfEarlierVersionsAreHandedOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := newCallLog(0)
	p := pipelinetest.New(t, nil)
	p.LLM.Handle(log.handle)
	insert := func(tr transcript.Transcript) int64 {
		var id int64
		err := p.Schema.Pool.QueryRow(ctx, `INSERT INTO episode (scope, messages, content_hash, occurred_at)
			VALUES ($1, $2, $3, $4) RETURNING id`, tr.Scope, tr.Messages, tr.ContentHash(), *tr.OccurredAt).Scan(&id)
		require.NoError(t, err)
		return id
	}
	legacy := insert(move("user:old", 1))
	_, err := p.Client.Insert(ctx, extract.EpisodeArgs{EpisodeID: legacy}, nil)
	require.NoError(t, err)
	p.Drain(t)
	require.Equal(t, "applied", p.Episode(t, legacy).State)

	reconcile := func() int {
		var n int
		require.NoError(t, pgx.BeginFunc(ctx, p.Schema.Pool, func(tx pgx.Tx) (err error) {
			n, err = extract.Reconcile(ctx, tx, p.Client)
			return err
		}))
		return n
	}
	orphan := insert(move("user:orphan", 1))
	require.Equal(t, 1, reconcile(), "one scope had pending episodes and no job")
	p.Drain(t)
	require.Equal(t, "applied", p.Episode(t, orphan).State)
	require.Zero(t, reconcile(), "nothing left to reconcile")
}

// TestScopePurgedWhileItsJobRuns: a scope purged while its job waits on the model ends
// with nothing of the scope re-created, the job completed, and the scope usable again.
func TestScopePurgedWhileItsJobRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	p := pipelinetest.New(t, nil)
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		select {
		case held <- struct{}{}: // the first call waits for the purge
			<-release
		default:
		}
		return newCallLog(0).handle(req)
	})
	p.Enqueue(t, move("user:gone", 1), move("user:gone", 2))
	<-held
	_, err := p.Store.Purge(ctx, memory.Selection{Scope: "user:gone", All: true})
	require.NoError(t, err)
	close(release)
	p.Drain(t)

	require.Zero(t, countRows(t, p, "SELECT count(*) FROM belief"), "nothing re-created")
	require.Zero(t, countRows(t, p, "SELECT count(*) FROM episode"))
	require.Equal(t, 1, p.LLM.ChatCount(), "the purged second episode is never extracted")
	require.Zero(t, countRows(t, p, "SELECT count(*) FROM river_job WHERE state <> 'completed'"))

	p.Enqueue(t, move("user:gone", 3))
	p.Drain(t)
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM belief WHERE scope = 'user:gone' AND status = 'active'"))
}
