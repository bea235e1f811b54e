package extract

import (
	"fmt"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

// A transcript whose prompt would not fit the model's window is extracted in segments:
// consecutive runs of its messages, in order, each in a prompt of its own that shows the
// candidates as the segments before left them, and each applied with where it ended
// (memory.ApplySegment), so that a crash resumes at the next one and none is applied
// twice. The last messages before a cut are shown again at the start of the next
// segment, so that what was said across the cut reads whole. A message longer than a
// segment is cut between words.

// Bounds of segmentation.
const (
	// overlapShare is the most of a segment's budget the messages shown again may take;
	// overlapUnits the most of them.
	overlapShare = 0.15
	overlapUnits = 2
	// minBudget is the least room for the transcript a prompt may have: a window that
	// leaves less beside the instructions and candidates is too small for extraction.
	minBudget = 256
	// refitShrink is what a budget is multiplied by when a prompt planned within it did
	// not fit after all (the server counted more than the estimate); maxRefits bounds
	// how often that happens to one episode's attempt.
	refitShrink = 0.6
	maxRefits   = 6
)

// unit is a span of a transcript that a segment holds whole: a message, or a piece of
// one that is longer than a segment may hold.
type unit struct {
	msg      int // index of the message
	from, to int // byte offsets of the span in its content
	tokens   int // estimate of the span as the transcript renders it
}

// message is the span as a message of its own.
func (u unit) message(msgs []prompts.Message) prompts.Message {
	m := msgs[u.msg]
	m.Content = m.Content[u.from:u.to]
	m.Continued, m.Continues = u.from > 0, u.to < len(msgs[u.msg].Content)
	return m
}

// cutUnits cuts the messages from msg on (from byte from of msg) into units of at most
// maxTokens each.
func cutUnits(msgs []prompts.Message, at memory.Progress, maxTokens int, tok *llm.Tokens) []unit {
	var out []unit
	for i := at.Message; i < len(msgs); i++ {
		from := 0
		if i == at.Message {
			from = min(at.Offset, len(msgs[i].Content))
		}
		whole := unit{msg: i, from: from, to: len(msgs[i].Content)}
		whole.tokens = tok.High(prompts.Transcript([]prompts.Message{whole.message(msgs)}))
		if whole.tokens <= maxTokens {
			out = append(out, whole)
			continue
		}
		// The role and markers cost a few tokens of each piece's line.
		for _, piece := range llm.SplitText(msgs[i].Content[from:], max(maxTokens-16, 1), tok) {
			u := unit{msg: i, from: from, to: from + len(piece)}
			u.tokens = tok.High(prompts.Transcript([]prompts.Message{u.message(msgs)}))
			out = append(out, u)
			from = u.to
		}
	}
	return out
}

// segment is the part of a transcript one prompt extracts.
type segment struct {
	// units are what the prompt extracts; earlier the units before them shown again.
	units, earlier []unit
	// whole says the segment is the whole transcript: a prompt like any, with no part.
	whole bool
	// total is the transcript's messages.
	total int
}

// messages are the segment's units as messages, and the earlier ones.
func (s *segment) messages(msgs []prompts.Message) (now, earlier []prompts.Message) {
	for _, u := range s.units {
		now = append(now, u.message(msgs))
	}
	for _, u := range s.earlier {
		earlier = append(earlier, u.message(msgs))
	}
	return now, earlier
}

// part is the segment as the prompt names it, nil for a whole transcript; number counts
// the segments this attempt extracted before.
func (s *segment) part(number int) *prompts.Part {
	if s.whole {
		return nil
	}
	return &prompts.Part{Number: number, First: s.units[0].msg + 1, Last: s.units[len(s.units)-1].msg + 1, Of: s.total}
}

// span is where the segment starts and where the next one does, and whether it is the
// last.
func (s *segment) span(msgs []prompts.Message) memory.Segment {
	first, last := s.units[0], s.units[len(s.units)-1]
	seg := memory.Segment{From: memory.Progress{Message: first.msg, Offset: first.from}}
	if last.to < len(msgs[last.msg].Content) {
		seg.Next = memory.Progress{Message: last.msg, Offset: last.to}
	} else {
		seg.Next = memory.Progress{Message: last.msg + 1}
	}
	seg.Last = seg.Next.Message >= len(msgs)
	return seg
}

// trim drops the segment's last unit, and reports whether one was left to drop: a
// prompt that came out longer than planned (its candidates took more room) holds less.
func (s *segment) trim() bool {
	if len(s.units) <= 1 {
		return false
	}
	s.units = s.units[:len(s.units)-1]
	s.whole = false
	return true
}

// planSegment chooses the next segment of the episode's transcript: the messages from
// where it stands that fit budget tokens, after the ones shown again. The whole
// transcript when it fits and none of it was applied yet.
func planSegment(msgs []prompts.Message, at memory.Progress, budget int, tok *llm.Tokens) (*segment, error) {
	if budget < minBudget {
		return nil, fmt.Errorf("%w: %d tokens are left for the transcript beside the instructions and the candidates, fewer than %d: use a model with a larger window (MODEL_CONTEXT)",
			errWindow, budget, minBudget)
	}
	units := cutUnits(msgs, at, budget/2, tok)
	if len(units) == 0 {
		return nil, fmt.Errorf("%w: nothing is left to extract at message %d", errEpisode, at.Message+1)
	}
	seg := &segment{total: len(msgs)}
	sum := 0
	for _, u := range units {
		if sum+u.tokens > budget && len(seg.units) > 0 {
			break
		}
		seg.units = append(seg.units, u)
		sum += u.tokens
	}
	if at == (memory.Progress{}) && len(seg.units) == len(units) {
		seg.whole = true
		return seg, nil
	}
	// What was said just before the cut, shown again.
	room := int(float64(budget) * overlapShare)
	if before := earlierUnits(msgs, at, room, tok); len(before) > 0 {
		seg.earlier = before
		for _, u := range before {
			sum += u.tokens
		}
		for sum > budget && seg.trim() {
			sum -= units[len(seg.units)].tokens
		}
	}
	return seg, nil
}

// earlierUnits are the last units before at, at most overlapUnits of them and room
// tokens: the end of a long one when it alone is larger.
func earlierUnits(msgs []prompts.Message, at memory.Progress, room int, tok *llm.Tokens) []unit {
	if at == (memory.Progress{}) || room <= 0 {
		return nil
	}
	first := max(at.Message-overlapUnits, 0)
	var before []unit
	for _, u := range cutUnits(msgs[:at.Message+1], memory.Progress{Message: first}, room, tok) {
		if u.msg < at.Message || u.to <= at.Offset {
			before = append(before, u)
		}
	}
	// The units just before the cut, the nearest first, while they fit.
	var out []unit
	sum := 0
	for i := len(before) - 1; i >= 0 && len(out) < overlapUnits; i-- {
		if sum+before[i].tokens > room {
			break
		}
		out = append([]unit{before[i]}, out...)
		sum += before[i].tokens
	}
	return out
}
