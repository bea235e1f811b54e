package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/memory"
)

// progressEvery is how often a drain run without a terminal logs its progress.
const progressEvery = 10 * time.Second

// waitDrained returns once no job is left to run, retries included, showing how the
// episodes go meanwhile: a progress bar on a terminal, a log line otherwise.
func waitDrained(ctx context.Context, jobs riverjobs.Lister, p *drainProgress) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		// Asked every 100 ms: whether any job is left, not how many (a page of rows).
		left, err := riverjobs.AnyUnfinished(ctx, jobs)
		if err != nil {
			return err
		}
		if !left {
			return p.update(ctx, true)
		}
		if err := p.update(ctx, false); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// drainProgress follows the episodes a drain run extracts.
type drainProgress struct {
	store  *memory.Store
	logger *slog.Logger
	start  time.Time
	// total is the episodes to extract: pending at start, plus any enqueued since.
	total, done int
	lastPending int
	lastLog     time.Time
	bars        *mpb.Progress
	bar         *mpb.Bar
}

func newDrainProgress(ctx context.Context, store *memory.Store, stderr io.Writer, logger *slog.Logger) (*drainProgress, error) {
	b, err := store.Backlog(ctx)
	if err != nil {
		return nil, err
	}
	p := &drainProgress{store: store, logger: logger, start: time.Now(), total: b.Pending, lastPending: b.Pending, lastLog: time.Now()}
	if app.IsTerminal(stderr) && b.Pending > 0 {
		p.bars = mpb.NewWithContext(ctx, mpb.WithOutput(stderr), mpb.WithWidth(40))
		p.bar = p.bars.AddBar(int64(b.Pending),
			mpb.PrependDecorators(decor.Name("episodes "), decor.CountersNoUnit("%d / %d")),
			mpb.AppendDecorators(decor.AverageSpeed(0, " %.1f/s "), decor.AverageETA(decor.ET_STYLE_MMSS)))
	} else {
		logger.InfoContext(ctx, "drain: extracting", "pending", b.Pending, "failed", b.Failed, "scopes", b.Scopes)
	}
	return p, nil
}

// update reads the backlog and shows it; final is the last call.
func (p *drainProgress) update(ctx context.Context, final bool) error {
	b, err := p.store.Backlog(ctx)
	if err != nil {
		return err
	}
	if b.Pending > p.lastPending { // enqueued meanwhile
		p.total += b.Pending - p.lastPending
	}
	p.lastPending = b.Pending
	p.done = p.total - b.Pending
	if p.bar != nil {
		p.bar.SetTotal(int64(p.total), false)
		p.bar.SetCurrent(int64(p.done))
		return nil
	}
	if final || time.Since(p.lastLog) >= progressEvery {
		p.lastLog = time.Now()
		p.logger.InfoContext(ctx, "drain: progress", p.attrs(b, final)...)
	}
	return nil
}

func (p *drainProgress) attrs(b memory.Backlog, final bool) []any {
	elapsed := time.Since(p.start)
	attrs := []any{"done", p.done, "left", b.Pending, "failed", b.Failed, "elapsed", elapsed.Round(time.Second)}
	if rate := float64(p.done) / elapsed.Seconds(); p.done > 0 && !final {
		attrs = append(attrs, "per_second", fmt.Sprintf("%.2f", rate),
			"time_left", (time.Duration(float64(b.Pending)/rate) * time.Second).Round(time.Second))
	}
	return attrs
}

func (p *drainProgress) close() {
	if p.bar != nil {
		p.bar.SetTotal(int64(p.total), true)
		p.bars.Wait()
	}
}
