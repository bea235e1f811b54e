package consolidate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// Actions of a review verdict.
const (
	reviewKeep      = "keep"
	reviewRetract   = "retract"
	reviewSupersede = "supersede"
)

// reviewVerdict is the model's answer about flagged belief Index.
type reviewVerdict struct {
	Index  int
	Action string // reviewKeep, reviewRetract or reviewSupersede
	// Statement is the replacement of a superseded belief, "" otherwise.
	Statement string
	// Reason is ReasonTemporal or ReasonCorrection; for keep it means nothing and is
	// whatever the model wrote.
	Reason memory.Reason
}

// reviewOutput is the `review` schema.
type reviewOutput struct {
	Reasoning string         `json:"reasoning"`
	Reviews   []reviewAnswer `json:"reviews"`
}

type reviewAnswer struct {
	Index     *int   `json:"index"`
	Action    string `json:"action"`
	Statement string `json:"statement"`
	Reason    string `json:"reason"`
}

// parseReview validates a review answer about n flagged beliefs and returns its
// verdicts by index, with the reasoning as their rationale. Every problem is an error
// wrapping llm.ErrMalformedOutput; nothing of a malformed answer is used. A belief the
// model did not answer has no verdict.
func parseReview(content string, n int) ([]reviewVerdict, string, error) {
	var out reviewOutput
	if err := llm.DecodeAnswer(content, MaxOutputBytes, "review", &out); err != nil {
		return nil, "", err
	}
	if out.Reviews == nil {
		return nil, "", llm.Malformedf("reviews is missing")
	}

	verdicts := make([]reviewVerdict, 0, len(out.Reviews))
	seen := make(map[int]bool, len(out.Reviews))
	for i, a := range out.Reviews {
		v, err := a.verdict(n)
		if err != nil {
			return nil, "", llm.Malformedf("reviews[%d]: %v", i, err)
		}
		if seen[v.Index] {
			return nil, "", llm.Malformedf("reviews[%d]: belief %d is answered twice", i, v.Index)
		}
		seen[v.Index] = true
		verdicts = append(verdicts, v)
	}
	slices.SortFunc(verdicts, func(a, b reviewVerdict) int { return cmp.Compare(a.Index, b.Index) })

	rationale := strings.TrimSpace(out.Reasoning)
	if r := []rune(rationale); len(r) > maxRationale {
		rationale = string(r[:maxRationale]) + "…"
	}
	return verdicts, rationale, nil
}

func (a reviewAnswer) verdict(n int) (reviewVerdict, error) {
	switch {
	case a.Index == nil:
		return reviewVerdict{}, errors.New("index is missing")
	case *a.Index < 0 || *a.Index >= n:
		return reviewVerdict{}, fmt.Errorf("index %d is not one of the %d beliefs shown", *a.Index, n)
	}
	v := reviewVerdict{Index: *a.Index, Action: a.Action, Reason: memory.Reason(a.Reason)}
	switch a.Action {
	case reviewKeep:
		return v, nil
	case reviewRetract, reviewSupersede:
	default:
		return reviewVerdict{}, fmt.Errorf("action %q is not keep, retract or supersede", a.Action)
	}
	if v.Reason != memory.ReasonTemporal && v.Reason != memory.ReasonCorrection {
		return reviewVerdict{}, fmt.Errorf("reason %q is not temporal or correction", a.Reason)
	}
	if a.Action == reviewRetract {
		return v, nil
	}
	v.Statement = strings.TrimSpace(a.Statement)
	switch {
	case v.Statement == "":
		return reviewVerdict{}, errors.New("supersede without a statement")
	// PostgreSQL cannot store NUL in text: asking again is better than failing later.
	case strings.ContainsRune(v.Statement, 0):
		return reviewVerdict{}, errors.New("statement contains a NUL character")
	case utf8.RuneCountInString(v.Statement) > memory.MaxStatementLen:
		return reviewVerdict{}, fmt.Errorf("statement is %d characters; the limit is %d", utf8.RuneCountInString(v.Statement), memory.MaxStatementLen)
	}
	return v, nil
}
