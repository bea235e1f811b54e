// Package testclock is a settable clock for tests of code that takes a Now function
// (memory.Config.Now, recall.Config.Now, ...): safe to read from the goroutines of a
// River client while the test moves it.
package testclock

import (
	"sync"
	"time"
)

// Clock is a settable time.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New is a clock at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
