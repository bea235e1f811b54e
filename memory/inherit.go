package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// Ancestors is the ancestors of scope, nearest first: its prefixes before each "/".
// "acme/team:x/user:1" has "acme/team:x" and "acme". An organisation's defaults live in
// an ancestor scope.
func Ancestors(scope string) []string {
	var out []string
	for i := strings.LastIndexByte(scope, '/'); i > 0; i = strings.LastIndexByte(scope[:i], '/') {
		out = append(out, scope[:i])
	}
	return out
}

// slot is what a belief fills: a subject's attribute. The nearest scope that fills a
// slot hides its ancestors' beliefs on it.
type slot struct{ subject, attribute string }

func slotOf(b Belief) slot {
	return slot{strings.ToLower(strings.TrimSpace(b.Subject)), strings.ToLower(strings.TrimSpace(b.Attribute))}
}

// ScopeRead reads one scope's beliefs in some view.
type ScopeRead func(ctx context.Context, scope string) ([]Belief, error)

// Inherited is read of scope plus, on the slots scope does not fill in that read, its
// ancestors' beliefs, the nearest scope winning each slot. Each belief keeps its own
// scope. A user's value beside an organisation default is coexistence: nothing is
// superseded, the read only chooses. The result is ordered as the views are: by
// attribute, then valid time.
func (s *Store) Inherited(ctx context.Context, scope string, read ScopeRead) ([]Belief, error) {
	bs, err := inherit(ctx, scope, read, nil)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(bs, func(a, b Belief) int {
		return cmp.Or(cmp.Compare(a.Attribute, b.Attribute), a.ValidFrom.Compare(b.ValidFrom), cmp.Compare(a.ID, b.ID))
	})
	return bs, nil
}

// inherit reads scope and its ancestors, nearest first, and keeps an ancestor's belief
// only on a slot no nearer scope fills. fills says which slots a scope fills; nil: the
// slots of its read (right for a read of the whole view, not for a ranked one).
func inherit(ctx context.Context, scope string, read ScopeRead, fills func(ctx context.Context, scope string) (map[slot]bool, error)) ([]Belief, error) {
	filled := map[slot]bool{}
	var out []Belief
	for _, sc := range append([]string{scope}, Ancestors(scope)...) {
		bs, err := read(ctx, sc)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			if !filled[slotOf(b)] {
				out = append(out, b)
			}
		}
		own := map[slot]bool{}
		if fills != nil {
			if own, err = fills(ctx, sc); err != nil {
				return nil, err
			}
		} else {
			for _, b := range bs {
				own[slotOf(b)] = true
			}
		}
		for sl := range own {
			filled[sl] = true
		}
	}
	return out, nil
}

// slots is the slots the beliefs of view fill, the view's arguments in args.
func (s *Store) slots(ctx context.Context, view string, args []any) (map[slot]bool, error) {
	rows, err := s.db.Query(ctx, "SELECT DISTINCT lower(trim(b.subject)), lower(trim(b.attribute)) FROM belief b WHERE "+view, args...)
	if err != nil {
		return nil, fmt.Errorf("slots of %v: %w", args[0], err)
	}
	defer rows.Close()
	out := map[slot]bool{}
	for rows.Next() {
		var sl slot
		if err := rows.Scan(&sl.subject, &sl.attribute); err != nil {
			return nil, fmt.Errorf("slots of %v: %w", args[0], err)
		}
		out[sl] = true
	}
	return out, rows.Err()
}
