package changes

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Listener wakes the readers waiting for a scope's next change: one connection of the
// pool LISTENs on Channel for every waiter of the process, taken by the first waiter and
// given back when the last one leaves.
type Listener struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	mu sync.Mutex
	// stop ends the listening connection's loop; nil when none runs.
	stop context.CancelFunc
	// ready is closed once the connection listens (or failed to).
	ready   chan struct{}
	waiters map[*waiter]struct{}
}

type waiter struct {
	match func(scope string) bool
	wake  chan struct{}
}

// NewListener returns a Listener on pool.
func NewListener(pool *pgxpool.Pool, logger *slog.Logger) *Listener {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Listener{pool: pool, log: logger, waiters: map[*waiter]struct{}{}}
}

// Subscribe registers a waiter for the scopes match accepts. The channel receives once a
// change of such a scope commits (or the listening connection broke: read again); call
// cancel when done. Subscribe before reading, so that a change committed between the
// read and the wait wakes it.
func (l *Listener) Subscribe(ctx context.Context, match func(scope string) bool) (wake <-chan struct{}, cancel func()) {
	w := &waiter{match: match, wake: make(chan struct{}, 1)}
	l.mu.Lock()
	l.waiters[w] = struct{}{}
	if l.stop == nil {
		var lctx context.Context
		lctx, l.stop = context.WithCancel(context.WithoutCancel(ctx))
		l.ready = make(chan struct{})
		go l.listen(lctx, l.ready, l.stop)
	}
	ready := l.ready
	l.mu.Unlock()
	select { // the first waiter waits until the connection listens, at most a moment
	case <-ready:
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
	}
	return w.wake, func() {
		l.mu.Lock()
		delete(l.waiters, w)
		if len(l.waiters) == 0 && l.stop != nil {
			l.stop()
			l.stop = nil
		}
		l.mu.Unlock()
	}
}

// listen holds one connection LISTENing until it fails, then wakes every waiter (they
// read again) and lets the next Subscribe start another.
func (l *Listener) listen(ctx context.Context, ready chan struct{}, stop context.CancelFunc) {
	defer func() {
		l.mu.Lock()
		if ctx.Err() == nil { // broken, not stopped: the next Subscribe starts another
			stop()
			l.stop = nil
			for w := range l.waiters {
				w.notify()
			}
		}
		l.mu.Unlock()
	}()
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		close(ready)
		l.log.WarnContext(ctx, "change feed: no connection to listen on", "error", err)
		return
	}
	defer conn.Release()
	_, err = conn.Exec(ctx, "LISTEN "+Channel)
	close(ready)
	if err != nil {
		l.log.WarnContext(ctx, "change feed: listen", "error", err)
		_ = conn.Conn().PgConn().Close(ctx) // broken either way
		return
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			// A connection that stopped listening must not go back to the pool.
			_ = conn.Conn().PgConn().Close(ctx)
			return
		}
		l.mu.Lock()
		for w := range l.waiters {
			if w.match(n.Payload) {
				w.notify()
			}
		}
		l.mu.Unlock()
	}
}

func (w *waiter) notify() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
