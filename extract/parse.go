package extract

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// Limits on one extraction answer; an honest answer about one conversation is far
// smaller.
const (
	MaxOutputBytes = 256 << 10
	MaxOutputFacts = 64
)

// output is the `extraction` schema of DESIGN.md.
type output struct {
	Reasoning string       `json:"reasoning"`
	Facts     []outputFact `json:"facts"`
}

type outputFact struct {
	Statement *string `json:"statement"`
	Subject   string  `json:"subject"`
	// SubjectAliases and SubjectKind may be absent or null, as in answers of a schema
	// before them.
	SubjectAliases []string        `json:"subject_aliases"`
	SubjectKind    *string         `json:"subject_kind"`
	Attribute      string          `json:"attribute"`
	Kind           string          `json:"kind"`
	ValidFrom      *string         `json:"valid_from"`
	Confidence     *float64        `json:"confidence"`
	Origin         string          `json:"origin"`
	Quote          string          `json:"quote"`
	Resolves       *outputResolves `json:"resolves"`
	// DependsOn may be absent: small models leave out what they have nothing for.
	DependsOn []int `json:"depends_on"`
}

type outputResolves struct {
	SessionIndex *int   `json:"session_index"`
	Action       string `json:"action"`
	Reason       string `json:"reason"`
}

// Parse validates an extraction answer for a prompt that showed candidates candidate
// beliefs, for a conversation at occurredAt. Every problem is an error wrapping
// llm.ErrMalformedOutput; nothing of a malformed answer is used.
func Parse(content string, candidates int, occurredAt time.Time) ([]memory.Fact, string, error) {
	var out output
	if err := llm.DecodeAnswer(content, MaxOutputBytes, "extraction", &out); err != nil {
		return nil, "", err
	}
	if out.Facts == nil {
		return nil, "", llm.Malformedf("facts is missing")
	}
	if len(out.Facts) > MaxOutputFacts {
		return nil, "", llm.Malformedf("%d facts; the limit is %d", len(out.Facts), MaxOutputFacts)
	}
	facts := make([]memory.Fact, 0, len(out.Facts))
	for i, of := range out.Facts {
		f, err := of.fact(candidates, occurredAt)
		if err != nil {
			return nil, "", llm.Malformedf("facts[%d]: %v", i, err)
		}
		facts = append(facts, f)
	}
	return facts, out.Reasoning, nil
}

func (of outputFact) fact(candidates int, occurredAt time.Time) (memory.Fact, error) {
	f := memory.Fact{
		Subject:   strings.TrimSpace(of.Subject),
		Attribute: strings.TrimSpace(of.Attribute),
		Kind:      memory.Kind(of.Kind),
		Origin:    memory.Origin(of.Origin),
		Quote:     of.Quote,
	}
	if of.Statement == nil {
		return f, errors.New("statement is missing")
	}
	if err := of.subjectNames(&f); err != nil {
		return f, err
	}
	// PostgreSQL cannot store NUL in text: asking again is better than failing later.
	for name, v := range map[string]string{"statement": *of.Statement, "subject": of.Subject, "attribute": of.Attribute, "quote": of.Quote} {
		if strings.ContainsRune(v, 0) {
			return f, fmt.Errorf("%s contains a NUL character", name)
		}
	}
	f.Statement = strings.TrimSpace(*of.Statement)
	if of.Confidence == nil {
		return f, errors.New("confidence is missing")
	}
	f.Confidence = *of.Confidence
	if math.IsNaN(f.Confidence) || f.Confidence < 0 || f.Confidence > 1 {
		return f, fmt.Errorf("confidence %v is not within 0..1", f.Confidence)
	}
	if f.Origin != memory.OriginUserStated && f.Origin != memory.OriginInferred {
		return f, fmt.Errorf("origin %q is not user_stated or inferred", of.Origin)
	}
	for _, i := range of.DependsOn {
		if i < 0 || i >= candidates {
			return f, fmt.Errorf("depends_on %d is not one of the %d candidates shown", i, candidates)
		}
	}
	f.DependsOn = of.DependsOn
	if r := of.Resolves; r != nil {
		d, err := r.directive(candidates)
		if err != nil {
			return f, fmt.Errorf("resolves: %w", err)
		}
		f.Resolves = d
	}
	pureRetract := f.Resolves != nil && f.Resolves.Action == memory.ActionRetract && f.Statement == ""
	reinforce := f.Resolves != nil && f.Resolves.Action == memory.ActionReinforce
	if !pureRetract && !reinforce {
		switch {
		case f.Statement == "":
			return f, errors.New("statement is empty")
		case f.Attribute == "":
			return f, errors.New("attribute is empty")
		case !slices.Contains(memory.Kinds, f.Kind):
			return f, fmt.Errorf("kind %q is not one of %v", of.Kind, memory.Kinds)
		}
	}
	if of.ValidFrom != nil && strings.TrimSpace(*of.ValidFrom) != "" {
		t, err := parseDate(strings.TrimSpace(*of.ValidFrom))
		if err != nil {
			return f, err
		}
		// A belief cannot have begun years after it was talked about, nor before 1900.
		if t.Year() < 1900 || t.After(occurredAt.AddDate(5, 0, 0)) {
			return f, fmt.Errorf("valid_from %s is implausible for a conversation on %s", t.Format(time.DateOnly), occurredAt.Format(time.DateOnly))
		}
		f.ValidFrom = &t
	}
	return f, nil
}

// subjectNames takes the other names and the kind the answer gives the fact's subject.
// An empty alias, or one that is the subject again, says nothing and is dropped; one no
// entity could be called, or too many, make the answer malformed.
func (of outputFact) subjectNames(f *memory.Fact) error {
	if len(of.SubjectAliases) > entity.MaxAliases {
		return fmt.Errorf("%d subject_aliases; the limit is %d", len(of.SubjectAliases), entity.MaxAliases)
	}
	subject := entity.Key(f.Subject)
	for _, a := range of.SubjectAliases {
		a = strings.TrimSpace(a)
		if a == "" || entity.Key(a) == subject {
			continue
		}
		if why := entity.CheckName(a); why != "" {
			return fmt.Errorf("subject_alias %q %s", a, why)
		}
		f.SubjectAliases = append(f.SubjectAliases, a)
	}
	if of.SubjectKind != nil && *of.SubjectKind != "" {
		k := entity.Kind(*of.SubjectKind)
		if !entity.ValidKind(k) {
			return fmt.Errorf("subject_kind %q is not one of %v", *of.SubjectKind, entity.Kinds)
		}
		f.SubjectKind = k
	}
	return nil
}

func (r outputResolves) directive(candidates int) (*memory.Directive, error) {
	if r.SessionIndex == nil {
		return nil, errors.New("session_index is missing")
	}
	d := &memory.Directive{Index: *r.SessionIndex, Action: memory.Action(r.Action), Reason: memory.Reason(r.Reason)}
	if d.Index < 0 || d.Index >= candidates {
		return nil, fmt.Errorf("session_index %d is not one of the %d candidates shown", d.Index, candidates)
	}
	switch d.Action {
	case memory.ActionSupersede, memory.ActionRetract:
		if d.Reason != memory.ReasonCorrection && d.Reason != memory.ReasonTemporal {
			return nil, fmt.Errorf("reason %q is not correction or temporal", r.Reason)
		}
	case memory.ActionReinforce:
		if d.Reason != memory.ReasonRestated {
			return nil, fmt.Errorf("reason %q is not restated", r.Reason)
		}
	default:
		return nil, fmt.Errorf("action %q is not supersede, retract or reinforce", r.Action)
	}
	return d, nil
}

// parseDate accepts an ISO date or date-time; a date-time without zone is UTC.
func parseDate(s string) (time.Time, error) {
	for _, layout := range []string{time.DateOnly, time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("valid_from %q is not an ISO date or date-time", s)
}
