package inspector

import (
	"strconv"
	"strings"
	"time"

	"github.com/credohq/credo/memory"
)

// timeline lays a supersession chain on one time axis, 0 to 100: for each belief,
// when it was true in the world (valid time) and when memory held it (known time).
// The bars are SVG rectangles whose geometry is in attributes, which the
// Content-Security-Policy allows where inline styles would not be.
type timeline struct {
	Start, End string
	Entries    []timelineEntry
}

type timelineEntry struct {
	memory.Belief
	This         bool
	Valid, Known bar
}

// bar is a rectangle's x and width on the 0..100 axis.
type bar struct{ X, W string }

func newTimeline(chain []memory.Belief, id int64, now time.Time) timeline {
	if len(chain) == 0 {
		return timeline{}
	}
	return newAxis(chain, now).timeline(chain, id)
}

// axis is the span a timeline's bars are placed on: from the earliest valid or known
// time of its beliefs to now, or to the latest of them if later.
type axis struct{ lo, hi time.Time }

// newAxis spans beliefs, which are not empty. An entity's page lays all its slots on
// one axis, so that where bars stand compares across slots.
func newAxis(beliefs []memory.Belief, now time.Time) axis {
	lo, hi := beliefs[0].ValidFrom, now
	for _, b := range beliefs {
		for _, t := range []time.Time{b.ValidFrom, b.RecordedAt} {
			if t.Before(lo) {
				lo = t
			}
			if t.After(hi) {
				hi = t
			}
		}
	}
	if !hi.After(lo) {
		hi = lo.Add(24 * time.Hour)
	}
	return axis{lo: lo, hi: hi}
}

// timeline places chain on a, marking belief id (0: none) as the page's own.
func (a axis) timeline(chain []memory.Belief, id int64) timeline {
	span := a.hi.Sub(a.lo).Seconds()
	place := func(from time.Time, to *time.Time) bar {
		end := a.hi
		if to != nil {
			end = *to
		}
		x := min(from.Sub(a.lo).Seconds()/span*100, 99.4)
		w := max(end.Sub(from).Seconds()/span*100, 0.6) // an instant still shows
		return bar{X: num(x), W: num(min(w, 100-x))}
	}
	tl := timeline{Start: date(a.lo), End: date(a.hi)}
	for _, b := range chain {
		tl.Entries = append(tl.Entries, timelineEntry{Belief: b, This: id != 0 && b.ID == id,
			Valid: place(b.ValidFrom, b.ValidUntil), Known: place(b.RecordedAt, b.RetiredAt)})
	}
	return tl
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// sourceView is an episode's transcript with a belief's quote marked.
type sourceView struct {
	Episode  *memory.Episode
	Quote    string
	Found    bool
	Messages []markedMessage
}

// markedMessage is one turn split around the quote: Mark is empty where it is not.
type markedMessage struct {
	Role, Name          string
	Before, Mark, After string
}

// newSource marks the first place the quote appears, exactly or else ignoring case.
func newSource(ep *memory.Episode, quote string) *sourceView {
	v := &sourceView{Episode: ep, Quote: quote}
	for _, m := range ep.Messages {
		mm := markedMessage{Role: m.Role, Name: m.Name, Before: m.Content}
		if !v.Found && quote != "" {
			if i, n := find(m.Content, quote); i >= 0 {
				mm.Before, mm.Mark, mm.After = m.Content[:i], m.Content[i:i+n], m.Content[i+n:]
				v.Found = true
			}
		}
		v.Messages = append(v.Messages, mm)
	}
	return v
}

// find is where quote starts in s and how long it is there, or -1.
func find(s, quote string) (int, int) {
	if i := strings.Index(s, quote); i >= 0 {
		return i, len(quote)
	}
	// Lowercasing keeps byte offsets only when it keeps lengths (ASCII, mostly).
	ls, lq := strings.ToLower(s), strings.ToLower(quote)
	if len(ls) != len(s) || len(lq) != len(quote) {
		return -1, 0
	}
	if i := strings.Index(ls, lq); i >= 0 {
		return i, len(quote)
	}
	return -1, 0
}
