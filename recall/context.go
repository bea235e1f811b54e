package recall

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

// ErrEmbedding is returned when the query could not be embedded: nothing was read. It is
// llm.ErrEmbedding, the one embedding error.
var ErrEmbedding = llm.ErrEmbedding

// Context is a text block ready for an agent's prompt, with the beliefs it shows.
type Context struct {
	Text string `json:"context"`
	// Mode is the view read: current, history (a question about the past) or as_of.
	Mode memory.RecallMode `json:"mode"`
	// Beliefs are the beliefs shown, in the block's order.
	Beliefs []memory.Belief `json:"beliefs"`
}

// Context is what memory holds for q, one belief a line with the date it holds from,
// best first; for a question about the past, the values that no longer hold follow,
// each with its valid interval. The block stays within q.Budget characters.
func (r *Reader) Context(ctx context.Context, q Query) (*Context, error) {
	pending, err := r.checkQuery(ctx, &q)
	if err != nil {
		return nil, err
	}
	sel, err := r.selectFor(ctx, q, pending)
	if err != nil {
		return nil, err
	}
	return render(q, sel, r.cfg.Now()), nil
}

// render writes the block, leaving out whole lines, lowest-ranked first, beyond the
// budget.
func render(q Query, sel *selection, now time.Time) *Context {
	out := &Context{Mode: sel.mode, Beliefs: []memory.Belief{}}
	var b strings.Builder
	switch {
	case q.AsOf != nil:
		fmt.Fprintf(&b, "Memory of %s, as of %s:\n", q.Scope, q.AsOf.UTC().Format(time.DateOnly))
	default:
		fmt.Fprintf(&b, "Memory of %s (today is %s):\n", q.Scope, now.UTC().Format(time.DateOnly))
	}
	if len(sel.holding) == 0 && len(sel.earlier) == 0 {
		b.WriteString("- nothing is known yet\n")
		out.Text = b.String()
		return out
	}
	add := func(bl memory.Belief, line string) bool {
		if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(line) > q.Budget {
			return false
		}
		b.WriteString(line)
		out.Beliefs = append(out.Beliefs, bl)
		return true
	}
	for _, bl := range sel.holding {
		if !add(bl, line(q.Scope, bl)) {
			break
		}
	}
	if len(sel.earlier) > 0 {
		header := "No longer true:\n"
		if utf8.RuneCountInString(b.String())+len(header) < q.Budget {
			b.WriteString(header)
			for _, bl := range sel.earlier {
				if !add(bl, line(q.Scope, bl)) {
					break
				}
			}
		}
	}
	out.Text = b.String()
	return out
}

// line is one belief of the block: "- statement (since DATE)", or with its interval;
// a belief of an ancestor scope says whose default it is.
func line(scope string, b memory.Belief) string {
	k := known(scope, b)
	s := "- " + oneLine(b.Statement) + " (" + k.When()
	if k.Inherited {
		s += "; default of " + b.Scope
	}
	return s + ")\n"
}

// known is b as the prompts show it.
func known(scope string, b memory.Belief) prompts.Known {
	return prompts.Known{Statement: b.Statement, ValidFrom: b.ValidFrom, ValidUntil: b.ValidUntil, Inherited: b.Scope != scope}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
