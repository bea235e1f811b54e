package reliability_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
)

// switchProxy forwards TCP connections on a fixed address to target. down closes the
// listener and every open connection, so that clients get "connection refused"; up
// listens on the same address again.
type switchProxy struct {
	addr   string
	target atomic.Value // string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// newSwitchProxy listens on a port below the kernel's ephemeral range, so that no
// outgoing connection takes the port while the proxy is down.
func newSwitchProxy(t *testing.T) *switchProxy {
	t.Helper()
	p := &switchProxy{conns: map[net.Conn]bool{}}
	var err error
	for range 50 {
		p.addr = fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if err = p.listen(); err == nil {
			break
		}
	}
	require.NoError(t, err)
	t.Cleanup(func() {
		p.down()
		p.wg.Wait()
	})
	return p
}

func (p *switchProxy) listen() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.forward(c) })
		}
	})
	return nil
}

func (p *switchProxy) forward(c net.Conn) {
	target, _ := p.target.Load().(string)
	up, err := net.Dial("tcp", target)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// track registers a proxied pair, or closes it if the proxy went down meanwhile.
func (p *switchProxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		_ = c.Close()
		_ = up.Close()
		return false
	}
	p.conns[c], p.conns[up] = true, true
	return true
}

func (p *switchProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
}

func (p *switchProxy) up(t *testing.T) {
	t.Helper()
	// The port was ours a moment ago; SO_REUSEADDR lets it be bound again at once.
	require.Eventually(t, func() bool { return p.listen() == nil }, 10*time.Second, 10*time.Millisecond)
}

// TestLLMOutage: the LLM server answers 503 for a while, then refuses connections for a
// while, then is back. Every episode is tried again until it is applied: none fails,
// and the beliefs are those of a run without outage.
func TestLLMOutage(t *testing.T) {
	t.Parallel()
	const maxAttempts = 25
	proxy := newSwitchProxy(t)
	seen := &pipelinetest.Reports{}
	p := pipelinetest.New(t, &pipelinetest.Options{MaxAttempts: maxAttempts, Workers: 4, Extract: func(c *extract.Config) {
		provider, err := llm.NewOpenAI(llm.Config{BaseURL: "http://" + proxy.addr + "/v1", APIKey: "llmtest",
			ChatModel: llmtest.DefaultChatModel, EmbedModel: llmtest.DefaultEmbedModel, Timeout: 10 * time.Second})
		if err != nil {
			panic(err)
		}
		c.Chat, c.Embed, c.Observer = provider, provider, seen
	}})
	proxy.target.Store(p.LLM.URL()[len("http://"):])
	var unavailable atomic.Bool
	unavailable.Store(true)
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		if unavailable.Load() {
			return llmtest.Reply{Status: http.StatusServiceUnavailable}
		}
		return movesAnswer(req)
	})
	episodes := movesEpisodes(5, 3, 4)
	p.Enqueue(t, episodes...)
	// The attempts of the episode each scope's job is on: the oldest pending one.
	const headAttempts = `SELECT coalesce(min(attempts), 0) FROM (SELECT DISTINCT ON (scope) attempts FROM episode
		WHERE state = 'pending' ORDER BY scope, occurred_at, id) AS heads`

	// Each phase lasts until every scope's episode has failed in it at least once.
	require.Eventually(t, func() bool { return poll(p.Schema.Pool, headAttempts) >= 2 }, 60*time.Second, 5*time.Millisecond,
		"every scope met the 503s")
	proxy.down()
	unavailable.Store(false)
	refusedFrom := count(t, p.Schema.Pool, headAttempts)
	require.Eventually(t, func() bool { return poll(p.Schema.Pool, headAttempts) >= refusedFrom+2 }, 60*time.Second, 5*time.Millisecond,
		"every scope met the refused connections")
	require.Zero(t, count(t, p.Schema.Pool, "SELECT count(*) FROM episode WHERE state <> 'pending'"), "nothing got through the outage")
	proxy.up(t)
	p.Drain(t)

	pool := p.Schema.Pool
	require.Equal(t, len(episodes), count(t, pool, "SELECT count(*) FROM episode WHERE state = 'applied' AND last_error IS NULL"))
	require.Zero(t, count(t, pool, "SELECT count(*) FROM river_job WHERE state <> 'completed'"))
	require.True(t, anyContains(seen.Errors(), "503"), "the 503s were tried again")
	require.True(t, anyContains(seen.Errors(), "connection refused"), "the refused connections were tried again")
	require.Less(t, count(t, pool, "SELECT max(attempts) FROM episode"), maxAttempts, "the outage was shorter than the retry window")
	require.Equal(t, len(episodes), count(t, pool, "SELECT count(*) FROM belief"))
	wantChains(t, p.Store, episodes)
}

// anyContains says whether one of errs contains substr.
func anyContains(errs []string, substr string) bool {
	return slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, substr) })
}
