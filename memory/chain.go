package memory

import (
	"fmt"
	"slices"
	"time"
)

// chain is a belief and every belief of its scope that leads into it through
// superseded_by links, oldest first: the history a backfill or a restatement is placed in.
type chain struct {
	members []*target
	byID    map[int64]*target
}

// held is whether t stands in its chain's history: a forgotten belief is out of it, and
// one whose interval is empty (retracted as never true, or replaced the day it began)
// never held.
func (t *target) held() bool {
	return t.Status != StatusForgotten && (t.ValidUntil == nil || t.ValidUntil.After(t.ValidFrom))
}

// newChain indexes members, oldest first.
func newChain(members []*target) *chain {
	c := &chain{members: members, byID: make(map[int64]*target, len(members))}
	for _, m := range members {
		c.byID[m.ID] = m
	}
	return c
}

// successor is the member m links to, past forgotten ones; nil at the head.
func (c *chain) successor(m *target) *target {
	for range len(c.members) {
		n, ok := c.byID[deref(m.SupersededBy)]
		if !ok || n.Status != StatusForgotten {
			return n
		}
		m = n
	}
	return nil
}

// leadsTo is the member that held which m's links lead to, past those that did not.
func (c *chain) leadsTo(m *target) *target {
	for range len(c.members) {
		if m = c.successor(m); m == nil || m.held() {
			return m
		}
	}
	return nil
}

// into lists the members whose links lead into id: directly, or as members that held,
// past members that did not.
func (c *chain) into(id int64) []int64 {
	var out []int64
	for _, m := range c.members {
		if deref(m.SupersededBy) == id || (m.held() && c.leadsTo(m) == c.byID[id]) {
			out = append(out, m.ID)
		}
	}
	return out
}

// place is where a belief valid from a time goes in a chain. next is the earliest member
// that held after it; prev the member that held until after it and leads into next (nil
// when none: the new belief starts a chain of its own before succ); succ the member the
// new belief links to: prev's successor, or next.
type place struct {
	prev, next, succ *target
}

// place finds where a belief valid from validFrom goes. Only members that held are
// placed around; one that never held stays where it is, and a forgotten one is passed.
func (c *chain) place(validFrom time.Time) (place, error) {
	var at place
	for _, m := range c.members {
		if m.held() && m.ValidFrom.After(validFrom) && (at.next == nil || m.ValidFrom.Before(at.next.ValidFrom)) {
			at.next = m
		}
	}
	if at.next == nil {
		return at, fmt.Errorf("nothing in the chain held after %s", validFrom.Format(time.RFC3339))
	}
	for _, m := range c.members {
		if m.held() && !m.ValidFrom.After(validFrom) && (m.ValidUntil == nil || m.ValidUntil.After(validFrom)) &&
			c.leadsTo(m) == at.next && (at.prev == nil || m.ValidFrom.After(at.prev.ValidFrom)) {
			at.prev = m
		}
	}
	at.succ = at.next
	if at.prev != nil {
		// prev held until after validFrom, so what it links to starts after it too.
		if s := c.successor(at.prev); s != nil && !s.ValidFrom.Before(validFrom) {
			at.succ = s
		} else {
			at.prev = nil
		}
	}
	return at, nil
}

// earlierStatement is what a statement of t dated before t starts does.
type earlierStatement int

const (
	// startMoves: t starts then (the first record of the same belief).
	startMoves earlierStatement = iota
	// startKept: only a belief that began the same day stands before t; t keeps its
	// start and is reinforced.
	startKept
	// restatesEarlier: the statement is of the member that held next after it, place's
	// next, which is restated instead.
	restatesEarlier
	// cameBack: a belief that held before t started at or after that date: the value
	// held then, gave way, and came back. The statement is history of its own, stored
	// at its place, as a backfill is.
	cameBack
)

// earlier decides what statement, valid from validFrom (before t starts), does to t,
// whose chain c is; place is where it goes, for restatesEarlier and cameBack.
func (c *chain) earlier(t *target, statement string, validFrom time.Time) (earlierStatement, place, error) {
	if !slices.ContainsFunc(c.members, func(m *target) bool { return m.ID != t.ID && m.held() && !m.ValidFrom.Before(validFrom) }) {
		return startMoves, place{}, nil
	}
	at, err := c.place(validFrom)
	switch {
	case err != nil:
		return 0, at, err
	case at.next.ID == t.ID:
		return startKept, at, nil
	case normStatement(statement) == normStatement(at.next.Statement):
		return restatesEarlier, at, nil
	}
	return cameBack, at, nil
}
