package consolidate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// Limits on one consolidation answer; an honest answer about one cluster is far
// smaller.
const (
	MaxOutputBytes = 64 << 10
	// maxRationale bounds the reasoning kept with each revision event.
	maxRationale = 2000
)

// output is the `consolidation` schema of DESIGN.md.
type output struct {
	Reasoning   string             `json:"reasoning"`
	Resolutions []outputResolution `json:"resolutions"`
}

type outputResolution struct {
	SessionIndex *int   `json:"session_index"`
	Action       string `json:"action"`
	ReplacedBy   *int   `json:"replaced_by"`
	Reason       string `json:"reason"`
}

// Parse validates a consolidation answer about a cluster of n beliefs and returns its
// resolutions with the reasoning as their rationale. Every problem is an error
// wrapping llm.ErrMalformedOutput; nothing of a malformed answer is used.
//
// The resolutions come back in an order the engine can apply them in: when the
// replacement of one belief is superseded itself (a chain of changes, 0 by 1 and 1 by
// 2), the first is applied while its replacement is still active.
func Parse(content string, n int) ([]memory.Resolution, string, error) {
	var out output
	if err := llm.DecodeAnswer(content, MaxOutputBytes, "consolidation", &out); err != nil {
		return nil, "", err
	}
	if out.Resolutions == nil {
		return nil, "", llm.Malformedf("resolutions is missing")
	}
	// Every superseded belief needs another that stays.
	if len(out.Resolutions) >= n {
		return nil, "", llm.Malformedf("%d resolutions for %d beliefs: at least one must stay", len(out.Resolutions), n)
	}

	rationale := strings.TrimSpace(out.Reasoning)
	if r := []rune(rationale); len(r) > maxRationale {
		rationale = string(r[:maxRationale]) + "…"
	}
	res := make([]memory.Resolution, 0, len(out.Resolutions))
	replacedBy := map[int]int{} // session_index → replaced_by
	for i, or := range out.Resolutions {
		r, err := or.resolution(n)
		if err != nil {
			return nil, "", llm.Malformedf("resolutions[%d]: %v", i, err)
		}
		if _, dup := replacedBy[r.Index]; dup {
			return nil, "", llm.Malformedf("resolutions[%d]: belief %d is superseded twice", i, r.Index)
		}
		replacedBy[r.Index] = *r.ReplacedBy
		r.Rationale = rationale
		res = append(res, r)
	}

	// depth is how many supersessions lead from a belief to one that stays; a
	// resolution is applied before the one that supersedes its replacement.
	depth := make(map[int]int, len(res))
	for _, r := range res {
		d, at := 0, r.Index
		for {
			next, ok := replacedBy[at]
			if !ok {
				break
			}
			if d++; d > len(res) {
				return nil, "", llm.Malformedf("belief %d is replaced in a cycle", r.Index)
			}
			at = next
		}
		depth[r.Index] = d
	}
	slices.SortStableFunc(res, func(a, b memory.Resolution) int { return cmp.Compare(depth[b.Index], depth[a.Index]) })
	return res, out.Reasoning, nil
}

func (or outputResolution) resolution(n int) (memory.Resolution, error) {
	switch {
	case or.SessionIndex == nil:
		return memory.Resolution{}, errors.New("session_index is missing")
	case *or.SessionIndex < 0 || *or.SessionIndex >= n:
		return memory.Resolution{}, fmt.Errorf("session_index %d is not one of the %d beliefs shown", *or.SessionIndex, n)
	case or.Action != string(memory.ActionSupersede):
		return memory.Resolution{}, fmt.Errorf("action %q is not supersede", or.Action)
	case or.ReplacedBy == nil:
		return memory.Resolution{}, errors.New("replaced_by is missing")
	case *or.ReplacedBy < 0 || *or.ReplacedBy >= n:
		return memory.Resolution{}, fmt.Errorf("replaced_by %d is not one of the %d beliefs shown", *or.ReplacedBy, n)
	case *or.ReplacedBy == *or.SessionIndex:
		return memory.Resolution{}, fmt.Errorf("belief %d is replaced by itself", *or.SessionIndex)
	}
	reason := memory.Reason(or.Reason)
	if !slices.Contains([]memory.Reason{memory.ReasonDuplicate, memory.ReasonTemporal, memory.ReasonCorrection}, reason) {
		return memory.Resolution{}, fmt.Errorf("reason %q is not duplicate, temporal or correction", or.Reason)
	}
	return memory.Resolution{Index: *or.SessionIndex, ReplacedBy: or.ReplacedBy, Action: memory.ActionSupersede, Reason: reason}, nil
}
