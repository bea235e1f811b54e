// Package testlog is a log that tests read while the goroutines under test write it.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers: a slog handler's
// output that a test reads while workers still log.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p, as io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
