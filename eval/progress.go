package eval

import (
	"context"
	"io"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progressBar is a bar that redraws itself on a terminal; nil (no terminal) does
// nothing and says so with off.
type progressBar struct {
	bars *mpb.Progress
	bar  *mpb.Bar
}

// newProgressBar draws a bar of total steps named name on w; nil when w is nil or
// there is nothing to count.
func newProgressBar(ctx context.Context, w io.Writer, name string, total int) *progressBar {
	if w == nil || total <= 0 {
		return nil
	}
	// The caller has found w a terminal: refresh whatever mpb makes of it.
	bars := mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithAutoRefresh())
	bar := bars.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name(name+" "), decor.CountersNoUnit("%d / %d")),
		mpb.AppendDecorators(decor.AverageSpeed(0, " %.2f/s "), decor.AverageETA(decor.ET_STYLE_MMSS)))
	return &progressBar{bars: bars, bar: bar}
}

func (p *progressBar) off() bool { return p == nil }

// set shows done steps.
func (p *progressBar) set(done int) {
	if p != nil {
		p.bar.SetCurrent(int64(done))
	}
}

// add shows n more steps done.
func (p *progressBar) add(n int) {
	if p != nil {
		p.bar.IncrBy(n)
	}
}

// finish completes the bar and waits until it is drawn.
func (p *progressBar) finish() {
	if p == nil {
		return
	}
	p.bar.SetTotal(-1, true)
	p.bars.Wait()
}
