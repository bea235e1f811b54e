package webhook_test

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/webhook"
)

const secretKey = "test key of at least thirty-two characters"

// received is one request the receiver got.
type received struct {
	ID, Timestamp, Signature, Path string
	Body                           []byte
	Answered                       int
	// arrived orders requests as they came, not as they were answered: a request
	// answered late is recorded after later ones.
	arrived int64
}

// receiver is a webhook endpoint in the test: answer decides each request's status
// (and may block); every request is recorded.
type receiver struct {
	srv      *httptest.Server
	conns    atomic.Int64
	arrivals atomic.Int64
	mu       sync.Mutex
	got      []received
	answer   func(r *http.Request, n int) int
}

func newReceiver(t *testing.T, answer func(r *http.Request, n int) int) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := rc.arrivals.Add(1)
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.got)
		rc.mu.Unlock()
		status := rc.answer(r, n)
		rc.mu.Lock()
		rc.got = append(rc.got, received{ID: r.Header.Get("Webhook-Id"), Timestamp: r.Header.Get("Webhook-Timestamp"),
			Signature: r.Header.Get("Webhook-Signature"), Path: r.URL.Path, Body: body, Answered: status, arrived: arrived})
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	rc.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.conns.Add(1)
		}
	}
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	got := append([]received(nil), rc.got...)
	slices.SortFunc(got, func(a, b received) int { return cmp.Compare(a.arrived, b.arrived) })
	return got
}

func (rc *receiver) delivered() []received {
	var out []received
	for _, r := range rc.requests() {
		if r.Answered/100 == 2 {
			out = append(out, r)
		}
	}
	return out
}

// verify checks a signature as a receiver would, written here apart from the package:
// HMAC-SHA256 of "id.timestamp.body" under the secret's base64 key.
func verify(t *testing.T, secret string, r received) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(r.ID + "." + r.Timestamp + "." + string(r.Body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	require.Contains(t, strings.Fields(r.Signature), want)
}

type message struct {
	Type      string         `json:"type"`
	Timestamp time.Time      `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

func decode(t *testing.T, r received) message {
	t.Helper()
	var m message
	require.NoError(t, json.Unmarshal(r.Body, &m))
	return m
}

type setup struct {
	schema   *dbtest.Schema
	store    *memory.Store
	webhooks *webhook.Webhooks
	client   *river.Client[pgx.Tx]
	cfg      webhook.WorkerConfig
	// middleware is the River client's (tracing's).
	middleware []rivertype.Middleware
}

// newSetup is a store announcing to webhooks, and a River client sending them with
// quick retries; guard is the deliveries' (creation allows private addresses, the
// receiver's). An attempt's timeout is far longer than a loaded machine takes to answer
// locally, so that only a test about timeouts, setting its own, sees one.
func newSetup(t *testing.T, adjust func(*webhook.WorkerConfig)) *setup {
	t.Helper()
	schema := dbtest.New(t)
	store := memory.NewStore(schema.Pool, &memory.Config{Announcer: changes.NewLog(changes.Config{Followers: []changes.Follower{webhook.NewDispatcher()}})})
	hooks, err := webhook.NewWebhooks(webhook.Config{Pool: schema.Pool, SecretKey: secretKey, Guard: webhook.Guard{AllowPrivate: true}})
	require.NoError(t, err)
	s := &setup{schema: schema, store: store, webhooks: hooks}
	s.cfg = webhook.WorkerConfig{Pool: schema.Pool, SecretKey: secretKey, Guard: webhook.Guard{AllowPrivate: true},
		Render: api.WebhookRenderer(store, changes.NewReader(schema.Pool)), Timeout: time.Minute,
		RetryBase: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond}
	if adjust != nil {
		adjust(&s.cfg)
	}
	s.client = s.startClient(t)
	return s
}

func (s *setup) startClient(t *testing.T) *river.Client[pgx.Tx] {
	t.Helper()
	w, err := webhook.NewWorker(s.cfg)
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	client, err := river.NewClient(riverpgxv5.New(s.schema.Pool), &river.Config{
		Queues: map[string]river.QueueConfig{webhook.Queue: {MaxWorkers: 4}}, Workers: workers,
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
		RetryPolicy: quickRetry{}, Middleware: s.middleware,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(ctx)
	})
	return client
}

type quickRetry struct{}

func (quickRetry) NextRetry(*rivertype.JobRow) time.Time {
	return time.Now().Add(10 * time.Millisecond)
}

func (s *setup) create(t *testing.T, url, prefix string, events ...memory.ChangeKind) (*webhook.Webhook, string) {
	t.Helper()
	w, secret, err := s.webhooks.Create(context.Background(), webhook.CreateParams{URL: url, ScopePrefix: prefix, Events: events})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(secret, "whsec_"))
	return w, secret
}

func date(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }

// supersede stores "before: statement" in scope and supersedes it with statement.
func (s *setup) supersede(t *testing.T, scope, statement string) int64 {
	t.Helper()
	ctx := context.Background()
	res, err := s.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, At: date("2026-01-15"),
		Facts: []memory.Fact{{Statement: "before: " + statement, Attribute: statement, Confidence: 0.9, Origin: memory.OriginUserStated}}})
	require.NoError(t, err)
	res, err = s.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, At: date("2026-02-15"),
		Candidates: []int64{res.Facts[0].BeliefID},
		Facts: []memory.Fact{{Statement: statement, Attribute: statement, Confidence: 0.9, Origin: memory.OriginUserStated,
			Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}}}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeSuperseded, res.Facts[0].Kind)
	return res.Facts[0].EventID
}

// drain waits until no delivery job is left.
func (s *setup) drain(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		left, err := riverjobs.AnyUnfinished(context.Background(), s.client)
		return err == nil && !left
	}, 60*time.Second, 20*time.Millisecond)
}

func TestSupersessionIsDeliveredSignedAndRetriedWithTheSameID(t *testing.T) {
	t.Parallel()
	var hookSeen atomic.Bool
	rc := newReceiver(t, func(r *http.Request, _ int) int {
		if r.URL.Path == "/hook" && !hookSeen.Swap(true) {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	s := newSetup(t, nil)
	_, secret := s.create(t, rc.srv.URL+"/hook", "acme/", memory.ChangeRevisionApplied)
	other, otherSecret := s.create(t, rc.srv.URL+"/other", "globex/", memory.ChangeRevisionApplied)
	eventID := s.supersede(t, "acme/user:1", "User lives in Miami")
	s.supersede(t, "globex/user:1", "User lives in Oslo")
	s.supersede(t, "initech/user:1", "User lives in Rome")
	s.drain(t)

	// Delivery is at least once: what is promised is each change delivered, every try
	// signed and under the same webhook-id, and nothing of another prefix; not how many
	// sends it took.
	byPath := map[string][]received{}
	for _, r := range rc.requests() {
		require.NotContains(t, string(r.Body), "initech", "no webhook subscribes to initech/")
		byPath[r.Path] = append(byPath[r.Path], r)
	}
	require.Len(t, byPath, 2, "only the two webhooks' URLs")
	acme, globex := byPath["/hook"], byPath["/other"]
	require.GreaterOrEqual(t, len(acme), 2, "refused with 500, then sent again")
	require.Equal(t, http.StatusInternalServerError, acme[0].Answered)
	for _, r := range acme {
		require.Equal(t, acme[0].ID, r.ID, "the same webhook-id on each try")
		verify(t, secret, r)
		m := decode(t, r)
		require.Equal(t, "revision.applied", m.Type)
		require.Equal(t, "acme/user:1", m.Data["scope"], "nothing of globex/ to acme/'s webhook")
		require.Equal(t, "supersede", m.Data["action"])
		require.Equal(t, "before: User lives in Miami", m.Data["old_statement"])
		require.InDelta(t, float64(eventID), m.Data["id"], 0)
	}
	require.Equal(t, http.StatusNoContent, acme[len(acme)-1].Answered, "accepted in the end")

	// globex/ got its own, and nothing of acme/.
	require.NotEmpty(t, globex)
	for _, r := range globex {
		require.Equal(t, globex[0].ID, r.ID, "webhook %d: one message, the supersession of globex/", other.ID)
		verify(t, otherSecret, r)
		require.Equal(t, "globex/user:1", decode(t, r).Data["scope"])
	}
	require.Equal(t, http.StatusNoContent, globex[len(globex)-1].Answered)
	hooks, err := s.webhooks.List(context.Background(), func(string) bool { return true })
	require.NoError(t, err)
	require.Len(t, hooks, 2)
	for _, h := range hooks {
		require.Zero(t, h.Status.Pending)
		require.NotNil(t, h.Status.LastStatus)
		require.Equal(t, http.StatusNoContent, *h.Status.LastStatus, "webhook %d", h.ID)
	}
}

// Every first attempt fails or times out: each change is retried, and the scope's
// changes still arrive in position order. Delivery is at least once (a send answered
// after its timeout is sent again), so what is checked is the order of every send as it
// arrived: a change is never sent once a later one was, and each is delivered.
func TestOrderPerScopeThroughRetriesAndTimeouts(t *testing.T) {
	t.Parallel()
	var seen sync.Map
	var late atomic.Bool
	rc := newReceiver(t, func(r *http.Request, _ int) int {
		if _, again := seen.LoadOrStore(r.Header.Get("Webhook-Id"), true); again {
			if r.Header.Get("Webhook-Id") == "msg_3" && !late.Swap(true) {
				// Accepted after the sender gave up, as under load: sent again.
				<-r.Context().Done()
			}
			return http.StatusOK
		}
		if strings.HasSuffix(r.Header.Get("Webhook-Id"), "1") {
			<-r.Context().Done()             // outlast the attempt's timeout
			return http.StatusGatewayTimeout // recorded only: the worker is gone
		}
		return http.StatusBadGateway
	})
	// Long enough that an answer at once is seldom late on a loaded machine; one late
	// is sent again, which the checks below allow.
	s := newSetup(t, func(c *webhook.WorkerConfig) { c.Timeout = time.Second })
	s.create(t, rc.srv.URL, "acme/", memory.ChangeRevisionApplied)
	const n = 6
	var want []int64
	for i := range n {
		want = append(want, s.supersede(t, "acme/user:1", "fact "+string(rune('a'+i))))
	}
	s.drain(t)

	var sent, delivered []int64
	first := map[string]received{}
	change := map[string]int64{}
	for _, r := range rc.requests() {
		id := int64(decode(t, r).Data["id"].(float64))
		if c, ok := change[r.ID]; ok {
			require.Equal(t, c, id, "a webhook-id names one change, on every try")
		} else {
			change[r.ID], first[r.ID] = id, r
		}
		if len(sent) > 0 {
			require.GreaterOrEqual(t, id, sent[len(sent)-1], "change %d sent after a later one", id)
		}
		sent = append(sent, id)
		if r.Answered/100 == 2 && !slices.Contains(delivered, id) {
			delivered = append(delivered, id)
		}
	}
	require.Equal(t, want, delivered, "each change delivered, in order")
	for msg, r := range first {
		require.NotEqual(t, http.StatusOK, r.Answered, "%s: the first attempt failed, and was retried", msg)
	}
}

// A receiver on an internal address gets no connection when deliveries run guarded,
// though the webhook was created where that was allowed: the address is checked when
// dialed (DNS rebinding).
func TestDeliveryRefusesInternalAddressWhenDialed(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusOK })
	s := newSetup(t, func(c *webhook.WorkerConfig) { c.Guard = webhook.Guard{} })
	w, _ := s.create(t, rc.srv.URL, "acme/", memory.ChangeRevisionApplied)
	s.supersede(t, "acme/user:1", "User lives in Miami")
	require.Eventually(t, func() bool {
		got, err := s.webhooks.Get(context.Background(), w.ID)
		return err == nil && got.Status.FailuresInRow >= 2
	}, 60*time.Second, 20*time.Millisecond)
	got, err := s.webhooks.Get(context.Background(), w.ID)
	require.NoError(t, err)
	require.Contains(t, *got.Status.LastError, "internal address")
	require.Nil(t, got.Status.LastStatus)
	require.Equal(t, 1, got.Status.Pending)
	require.NotNil(t, got.Status.OldestUndelivered)
	require.Zero(t, rc.conns.Load(), "no connection reached the receiver")
	require.Empty(t, rc.requests())

	// At creation, the same guard refuses the URL outright.
	strict, err := webhook.NewWebhooks(webhook.Config{Pool: s.schema.Pool, SecretKey: secretKey})
	require.NoError(t, err)
	_, _, err = strict.Create(context.Background(), webhook.CreateParams{URL: rc.srv.URL, ScopePrefix: "acme/"})
	require.ErrorIs(t, err, webhook.ErrURL)
	_, _, err = strict.Create(context.Background(), webhook.CreateParams{URL: "https://localhost/", ScopePrefix: "acme/"})
	require.ErrorIs(t, err, webhook.ErrURL)
	require.Zero(t, rc.conns.Load())
}

// A purge while deliveries wait: after it returns, nothing sent carries the purged
// text; the purge itself is delivered, counts only.
func TestPurgeDuringBacklog(t *testing.T) {
	t.Parallel()
	var open, late atomic.Bool
	rc := newReceiver(t, func(r *http.Request, _ int) int {
		if !open.Load() {
			return http.StatusServiceUnavailable
		}
		if !late.Swap(true) {
			// The first answer once open comes after the sender gave up, as under load:
			// recorded as delivered, and sent again (delivery is at least once).
			<-r.Context().Done()
		}
		return http.StatusOK
	})
	s := newSetup(t, func(c *webhook.WorkerConfig) { c.Timeout = 500 * time.Millisecond })
	w, _ := s.create(t, rc.srv.URL, "acme/", memory.ChangeRevisionApplied)
	for _, city := range []string{"Miami", "Lisbon", "Kyoto"} {
		s.supersede(t, "acme/user:1", "User lives in "+city)
	}
	s.supersede(t, "acme/user:2", "User lives in Oslo")
	require.Eventually(t, func() bool { return len(rc.requests()) >= 2 }, 60*time.Second, 10*time.Millisecond, "the backlog is being retried")
	_, err := s.store.Purge(context.Background(), memory.Selection{Scope: "acme/user:1", All: true})
	require.NoError(t, err)
	after := len(rc.requests())
	// Its deliveries go with it (their jobs with the purge's): no row names the scope,
	// and none is left pending with no job to send it.
	require.Zero(t, s.schema.Mentions(t, "acme/user:1")["webhook_delivery"])
	open.Store(true)
	s.drain(t)

	// What the contract promises, not how many sends it took: delivery is at least once,
	// so under load a send whose answer came late is sent again, and a retry may land on
	// either side of the snapshot above.
	var user2 bool
	for _, r := range rc.requests()[after:] {
		for _, city := range []string{"Miami", "Lisbon", "Kyoto"} {
			require.NotContains(t, string(r.Body), city, "sent after the purge returned")
		}
		// An erased scope leaves no row naming it, so its purge is not announced.
		require.NotContains(t, string(r.Body), "acme/user:1", "nothing of user:1 after its purge")
		if m := decode(t, r); r.Answered == http.StatusOK && m.Type == "revision.applied" && m.Data["scope"] == "acme/user:2" {
			user2 = true
		}
	}
	require.True(t, user2, "user:2's change is delivered")
	got, err := s.webhooks.Get(context.Background(), w.ID)
	require.NoError(t, err)
	require.Zero(t, got.Status.Pending)
}

// A worker stopped in the middle of a send: the delivery is not lost, another worker
// sends it again under the same webhook-id. The first send ends only when its worker
// stops (its timeout is far off), so the test does not race the clock.
func TestDeliveryOutlivesAStoppedWorker(t *testing.T) {
	t.Parallel()
	first := make(chan struct{})
	var once sync.Once
	rc := newReceiver(t, func(r *http.Request, n int) int {
		if n == 0 {
			once.Do(func() { close(first) })
			<-r.Context().Done()             // the worker goes away mid-request
			return http.StatusGatewayTimeout // recorded only: the worker is gone
		}
		return http.StatusOK
	})
	s := newSetup(t, nil)
	w, _ := s.create(t, rc.srv.URL, "acme/", memory.ChangeRevisionApplied)
	s.supersede(t, "acme/user:1", "User lives in Miami")
	<-first
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.client.StopAndCancel(ctx))

	s.client = s.startClient(t)
	s.drain(t)
	got := rc.requests()
	require.GreaterOrEqual(t, len(got), 2)
	require.Equal(t, http.StatusGatewayTimeout, got[0].Answered, "the stopped worker's send")
	for _, r := range got {
		require.Equal(t, got[0].ID, r.ID, "the same message, again")
	}
	require.NotEmpty(t, rc.delivered(), "delivered by the next worker")
	status, err := s.webhooks.Get(context.Background(), w.ID)
	require.NoError(t, err)
	require.Zero(t, status.Status.Pending)
}

// A webhook whose prefix is "*" (as the API stores it) takes the changes of every scope,
// as the feed's and a policy's "*" read.
func TestEveryScopeWebhook(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusNoContent })
	s := newSetup(t, nil)
	s.create(t, rc.srv.URL, webhook.EveryScope, memory.ChangeRevisionApplied)
	s.supersede(t, "acme/user:1", "User lives in Miami")
	s.supersede(t, "globex/user:1", "User lives in Oslo")
	s.drain(t)
	scopes := map[any]bool{}
	for _, r := range rc.delivered() {
		scopes[decode(t, r).Data["scope"]] = true
	}
	require.Equal(t, map[any]bool{"acme/user:1": true, "globex/user:1": true}, scopes)
}

// A webhook subscribes to new beliefs and soft forgets: each is delivered with the
// belief as the API gives it (a forgotten one without its words).
func TestBeliefsCreatedAndForgottenAreDelivered(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusNoContent })
	s := newSetup(t, nil)
	s.create(t, rc.srv.URL, "acme/", memory.ChangeBeliefCreated, memory.ChangeBeliefForgotten)
	ctx := context.Background()
	res, err := s.store.Apply(ctx, &memory.Batch{Scope: "acme/user:1", Origin: memory.RevisionExtraction, At: date("2026-01-15"),
		Facts: []memory.Fact{{Statement: "User lives in Miami", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated}}})
	require.NoError(t, err)
	id := res.Facts[0].BeliefID
	s.drain(t)
	_, err = s.store.Forget(ctx, memory.Selection{Scope: "acme/user:1", IDs: []int64{id}})
	require.NoError(t, err)
	s.drain(t)

	got := rc.delivered()
	require.Len(t, got, 2)
	created, forgotten := decode(t, got[0]), decode(t, got[1])
	require.Equal(t, "belief.created", created.Type)
	require.InDelta(t, float64(id), created.Data["id"], 0)
	require.Equal(t, "User lives in Miami", created.Data["statement"])
	require.Equal(t, "active", created.Data["status"])
	require.Equal(t, "belief.forgotten", forgotten.Type)
	require.InDelta(t, float64(id), forgotten.Data["id"], 0)
	require.Equal(t, "forgotten", forgotten.Data["status"])
	require.NotContains(t, string(got[1].Body), "Miami")
}
