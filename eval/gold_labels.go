package eval

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/credohq/credo/memory"
)

//go:embed gold.jsonl
var shippedLabels []byte

// LabelsName is how errors name the embedded gold labels.
const LabelsName = "eval/gold.jsonl"

// Labels are what a perfect model answers about one scenario: the facts of each of its
// transcripts and, where the scenario's expectations rest on them, the verdicts of
// consolidation and of the review of dependents. A directive names its target by the
// statement of a belief an earlier fact stored; the gold model turns it into the index
// the prompt shows that belief at.
type Labels struct {
	Scenario string `json:"scenario"`
	// Transcripts are the facts of each transcript, by transcript id; no facts is an
	// empty list.
	Transcripts map[string][]GoldFact `json:"transcripts"`
	// Consolidation are the merges a consolidation pass should make; any cluster they do
	// not name is kept whole.
	Consolidation []GoldMerge `json:"consolidation,omitempty"`
	// Review are the verdicts on beliefs flagged because a basis of theirs changed.
	Review []GoldReview `json:"review,omitempty"`
}

// GoldFact is one fact of the extraction schema as a perfect model writes it.
type GoldFact struct {
	Statement  string  `json:"statement"`
	Subject    string  `json:"subject"`
	Attribute  string  `json:"attribute"`
	Kind       string  `json:"kind"`
	ValidFrom  *string `json:"valid_from,omitempty"`
	Confidence float64 `json:"confidence"`
	Origin     string  `json:"origin"`
	// Quote is an exact span of the transcript.
	Quote    string         `json:"quote"`
	Resolves *GoldDirective `json:"resolves,omitempty"`
	// DependsOn are the statements of the candidates the fact was concluded from.
	DependsOn []string `json:"depends_on,omitempty"`
}

// GoldDirective is a fact's resolves, its target named by statement.
type GoldDirective struct {
	Target string `json:"target"`
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// GoldMerge is one consolidation verdict: Belief is superseded by ReplacedBy.
type GoldMerge struct {
	Belief     string `json:"belief"`
	ReplacedBy string `json:"replaced_by"`
	Reason     string `json:"reason"`
}

// GoldReview is the verdict on a flagged belief: keep, retract, or supersede by
// Statement. Now, when set, is what replaced its basis: the verdict is for that change.
type GoldReview struct {
	Belief    string `json:"belief"`
	Now       string `json:"now,omitempty"`
	Action    string `json:"action"`
	Statement string `json:"statement,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// ShippedLabels are the gold labels of the shipped scenarios, embedded in the binary.
func ShippedLabels() ([]Labels, error) {
	return LoadLabels(LabelsName, bytes.NewReader(shippedLabels))
}

// LoadLabels reads gold labels, one scenario a line, each checked on its own (see
// CheckLabels for their agreement with the scenarios).
func LoadLabels(name string, r io.Reader) ([]Labels, error) {
	var (
		out  []Labels
		seen = map[string]int{}
	)
	err := jsonLines(name, r, "labels", func(line int, l Labels) []string {
		var ps []string
		for _, p := range l.problems() {
			ps = append(ps, cmpName(l.Scenario)+": "+p)
		}
		if prev, ok := seen[l.Scenario]; ok {
			ps = append(ps, fmt.Sprintf("%s: labeled already on line %d", l.Scenario, prev))
		}
		seen[l.Scenario] = line
		out = append(out, l)
		return ps
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// problems lists what is wrong with l on its own: each fact as the extraction schema
// and the engine would take it.
func (l *Labels) problems() []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	if !namePattern.MatchString(l.Scenario) {
		add("scenario %q is not a scenario name", l.Scenario)
	}
	if l.Transcripts == nil {
		add("transcripts: missing")
	}
	for id, facts := range l.Transcripts {
		for i, f := range facts {
			for _, p := range f.problems() {
				add("transcripts.%s[%d]: %s", id, i, p)
			}
		}
	}
	for i, m := range l.Consolidation {
		if m.Belief == "" || m.ReplacedBy == "" || m.Belief == m.ReplacedBy {
			add("consolidation[%d]: needs two different statements", i)
		}
		if !slices.Contains([]memory.Reason{memory.ReasonDuplicate, memory.ReasonTemporal, memory.ReasonCorrection}, memory.Reason(m.Reason)) {
			add("consolidation[%d]: reason %q is not duplicate, temporal or correction", i, m.Reason)
		}
	}
	for i, r := range l.Review {
		switch {
		case r.Belief == "":
			add("review[%d]: belief is empty", i)
		case r.Action == "keep" && (r.Statement != "" || r.Reason != ""):
			add("review[%d]: keep takes no statement nor reason", i)
		case r.Action == "retract" && r.Statement != "":
			add("review[%d]: retract takes no statement", i)
		case r.Action == "supersede" && r.Statement == "":
			add("review[%d]: supersede needs a statement", i)
		case r.Action != "keep" && r.Action != "retract" && r.Action != "supersede":
			add("review[%d]: action %q is not keep, retract or supersede", i, r.Action)
		case r.Action != "keep" && r.Reason != string(memory.ReasonTemporal) && r.Reason != string(memory.ReasonCorrection):
			add("review[%d]: reason %q is not temporal or correction", i, r.Reason)
		}
	}
	return ps
}

func (f GoldFact) problems() []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	if strings.TrimSpace(f.Quote) == "" {
		add("quote is empty")
	}
	if f.Confidence <= 0 || f.Confidence > 1 {
		add("confidence %v is not within (0, 1]", f.Confidence)
	}
	if f.Origin != string(memory.OriginUserStated) && f.Origin != string(memory.OriginInferred) {
		add("origin %q is not user_stated or inferred", f.Origin)
	}
	if f.ValidFrom != nil {
		if _, err := time.Parse(time.DateOnly, *f.ValidFrom); err != nil {
			add("valid_from %q is not a date", *f.ValidFrom)
		}
	}
	pure := f.Resolves != nil && f.Resolves.Action == string(memory.ActionRetract) && f.Statement == ""
	if !pure && (f.Statement == "" || f.Subject == "" || f.Attribute == "" || !slices.Contains(memory.Kinds, memory.Kind(f.Kind))) {
		add("statement, subject, attribute and kind are needed but for a pure retraction")
	}
	if d := f.Resolves; d != nil {
		switch memory.Action(d.Action) {
		case memory.ActionSupersede, memory.ActionRetract:
			if d.Reason != string(memory.ReasonTemporal) && d.Reason != string(memory.ReasonCorrection) {
				add("resolves: reason %q is not temporal or correction", d.Reason)
			}
		case memory.ActionReinforce:
			if d.Reason != string(memory.ReasonRestated) || d.Target != f.Statement {
				add("resolves: a reinforcement restates its target, reason restated")
			}
		default:
			add("resolves: action %q is not supersede, retract or reinforce", d.Action)
		}
		if d.Target == "" {
			add("resolves: target is empty")
		}
	}
	return ps
}

// stores says whether the fact stores a belief of its statement.
func (f GoldFact) stores() bool {
	return f.Statement != "" && (f.Resolves == nil || f.Resolves.Action != string(memory.ActionReinforce))
}

// CheckLabels checks that labels answer scenarios: every scenario labeled, every
// transcript's facts given, every quote a span of its transcript, every target and
// basis a belief an earlier fact of the scenario stored, every review a stored belief.
func CheckLabels(scenarios []Scenario, labels []Labels) error {
	by := map[string]*Labels{}
	for i := range labels {
		by[labels[i].Scenario] = &labels[i]
	}
	var errs []error
	for _, s := range scenarios {
		l, ok := by[s.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: no gold labels", s.Name))
			continue
		}
		stored := map[string]bool{}
		for _, t := range s.Transcripts {
			facts, ok := l.Transcripts[t.ID]
			if !ok {
				errs = append(errs, fmt.Errorf("%s/%s: no gold facts (an empty list when there are none)", s.Name, t.ID))
				continue
			}
			text := transcriptText(t)
			for i, f := range facts {
				fail := func(format string, args ...any) {
					errs = append(errs, fmt.Errorf("%s/%s: fact %d: %s", s.Name, t.ID, i, fmt.Sprintf(format, args...)))
				}
				if !strings.Contains(text, f.Quote) {
					fail("quote %q is not in the transcript", f.Quote)
				}
				if f.Resolves != nil && !stored[f.Resolves.Target] {
					fail("target %q is no belief of an earlier transcript", f.Resolves.Target)
				}
				for _, d := range f.DependsOn {
					if !stored[d] {
						fail("depends_on %q is no belief of an earlier transcript", d)
					}
				}
			}
			for _, f := range facts {
				if f.stores() {
					stored[f.Statement] = true
				}
			}
		}
		for id := range l.Transcripts {
			if !slices.ContainsFunc(s.Transcripts, func(t Transcript) bool { return t.ID == id }) {
				errs = append(errs, fmt.Errorf("%s: labels transcript %q, which the scenario does not have", s.Name, id))
			}
		}
		for i, r := range l.Review {
			if !stored[r.Belief] {
				errs = append(errs, fmt.Errorf("%s: review[%d]: %q is no belief the scenario stores", s.Name, i, r.Belief))
			}
		}
	}
	return errors.Join(errs...)
}

// transcriptText is every message of t, a line each, as quotes are taken from it.
func transcriptText(t Transcript) string {
	var b strings.Builder
	for _, m := range t.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}
