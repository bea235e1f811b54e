// Package eval scores how well the configured LLM revises memory with credo's prompts.
// A scenario is a short sequence of dated transcripts in one scope and the memory they
// should leave behind; Run sends a set of them through the real pipeline (enqueue,
// extraction jobs, consolidation, recall) in a throwaway schema and Score compares what
// memory holds with what the scenario expects. The labeled set credo ships is embedded
// (Shipped), so the eval command works from any directory.
package eval

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

//go:embed scenarios.jsonl
var shipped []byte

// ShippedName is how errors and reports name the embedded scenario set.
const ShippedName = "eval/scenarios.jsonl"

// Categories are the kinds of revision the shipped set covers, in report order.
// A scenario file may use other categories; they are reported after these.
var Categories = []string{
	"move", "job_change", "preference_change", "correction", "retraction",
	"revision_vs_contraction", "additive", "hedged", "third_party", "restatement",
	"parallel_truths", "events", "dependent_beliefs",
}

// Scenario is one labeled case: transcripts of one scope, oldest first, and the memory
// they should leave.
type Scenario struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	// Scope is where the transcripts are enqueued; "eval:<name>" when empty.
	Scope       string       `json:"scope,omitempty"`
	Transcripts []Transcript `json:"transcripts"`
	Expect      Expect       `json:"expect"`
}

// Transcript is one conversation of a scenario.
type Transcript struct {
	ID         string               `json:"id"`
	OccurredAt time.Time            `json:"occurred_at"`
	Messages   []transcript.Message `json:"messages"`
}

// Expect is the memory a scenario should leave once every transcript is processed and
// the scope consolidated.
type Expect struct {
	// Current beliefs: each must match an active belief.
	Current []Match `json:"current,omitempty"`
	// Superseded beliefs: each must match a superseded belief, retired for Reason when
	// it is given (temporal or correction).
	Superseded []Match `json:"superseded,omitempty"`
	// Retracted beliefs: each must match a retracted belief, retired for Reason when it
	// is given.
	Retracted []Match `json:"retracted,omitempty"`
	// SideBySide groups beliefs that hold together: every member must match an active
	// belief.
	SideBySide [][]Match `json:"side_by_side,omitempty"`
	// Absent: no active belief may match.
	Absent []Match `json:"absent,omitempty"`
	// Reinforced: exactly one active belief matches, and it was reinforced (or absorbed
	// a duplicate through consolidation) rather than stored twice.
	Reinforced []Match `json:"reinforced,omitempty"`
	// DependsOn: beliefs concluded from others. Each needs a belief matching its Belief
	// (whatever its status) that was concluded from a belief matching its On.
	DependsOn []Dependency `json:"depends_on,omitempty"`
	// Questions an agent would ask, answered with memory.Recall.
	Questions []Question `json:"questions,omitempty"`
}

// Dependency expects a belief inferred from another: "User's time zone is US Eastern"
// concluded from "User lives in New York". It holds when a belief matching Belief lists,
// in its DependsOn, a belief matching On. Neither may be forgotten; both may be retired,
// since a basis that changed is what makes a dependency worth checking.
type Dependency struct {
	Belief Match `json:"belief"`
	On     Match `json:"on"`
}

// String is d in a short readable form, for reports: [eastern|est] <- [new york].
func (d Dependency) String() string { return d.Belief.String() + " <- " + d.On.String() }

// Match selects beliefs by their statement, and optionally their attribute. Phrases are
// compared after normalization (see Normalize) as whole words: "java" does not match
// "javascript". A statement matches when it holds every AllOf phrase, at least one
// AnyOf phrase (when AnyOf is not empty) and no NoneOf phrase.
type Match struct {
	// Attribute, when set, must appear as whole words in the belief's attribute:
	// "location" matches "location" and "home_location".
	Attribute string   `json:"attribute,omitempty"`
	AllOf     []string `json:"all_of,omitempty"`
	AnyOf     []string `json:"any_of,omitempty"`
	NoneOf    []string `json:"none_of,omitempty"`
	// Reason is the expected reason of a superseded or retracted belief: temporal or
	// correction; empty accepts either.
	Reason string `json:"reason,omitempty"`
}

// Question is asked of memory with memory.Recall, whose history mode turns on by
// itself for questions about the past. The answer is right when one of the recalled
// statements holds an AnyOf phrase.
type Question struct {
	Q     string   `json:"q"`
	AnyOf []string `json:"any_of"`
	// Historical says the question is about the past. It must agree with
	// memory.IsHistorical, so that recall reads the view the question is written for.
	Historical bool `json:"historical,omitempty"`
}

// Shipped is the scenario set embedded in the binary.
func Shipped() ([]Scenario, error) {
	return Load(ShippedName, bytes.NewReader(shipped))
}

// maxLine bounds one scenario line.
const maxLine = 4 << 20

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Load reads scenarios, one JSON object per line (blank lines are skipped), and checks
// each of them. Every problem is reported with the file name and line; nothing is
// returned unless every scenario is well-formed.
func Load(name string, r io.Reader) ([]Scenario, error) {
	var (
		out   []Scenario
		names = map[string]int{}
		scope = map[string]int{}
	)
	now := time.Now()
	err := jsonLines(name, r, "scenario", func(line int, s Scenario) []string {
		var ps []string
		if s.Scope == "" {
			s.Scope = "eval:" + s.Name
		}
		for _, p := range s.problems(now) {
			ps = append(ps, cmpName(s.Name)+": "+p)
		}
		if prev, ok := names[s.Name]; ok && s.Name != "" {
			ps = append(ps, fmt.Sprintf("%s: name already used on line %d", s.Name, prev))
		}
		if prev, ok := scope[s.Scope]; ok {
			ps = append(ps, fmt.Sprintf("%s: scope %q already used on line %d", cmpName(s.Name), s.Scope, prev))
		}
		names[s.Name], scope[s.Scope] = line, line
		out = append(out, s)
		return ps
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no scenarios", name)
	}
	return out, nil
}

// jsonLines reads r as JSON Lines (blank lines skipped): each line one object, decoded
// strictly into a T and handed to each with its line number. A line that does not
// decode is an error naming name and line, and so is every problem each returns.
func jsonLines[T any](name string, r io.Reader, what string, each func(line int, v T) []string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var errs []error
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %v", name, line, err)) //nolint:errorlint // told, the line's problem
			continue
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			errs = append(errs, fmt.Errorf("%s:%d: text after the %s object", name, line, what))
			continue
		}
		for _, p := range each(line, v) {
			errs = append(errs, fmt.Errorf("%s:%d: %s", name, line, p))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return errors.Join(errs...)
}

func cmpName(n string) string {
	if n == "" {
		return "(unnamed)"
	}
	return n
}

// problems lists what is wrong with s, field by field.
func (s *Scenario) problems(now time.Time) []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	if !namePattern.MatchString(s.Name) {
		add("name %q is not a slug (lowercase letters, digits, - and _)", s.Name)
	}
	if !namePattern.MatchString(s.Category) {
		add("category %q is not a slug (lowercase letters, digits, - and _)", s.Category)
	}
	if len(s.Transcripts) == 0 {
		add("transcripts: none")
	}
	ids := map[string]bool{}
	for i, t := range s.Transcripts {
		field := fmt.Sprintf("transcripts[%d]", i)
		if t.ID == "" {
			add("%s.id: missing", field)
		} else if ids[t.ID] {
			add("%s.id: %q repeats an earlier transcript's", field, t.ID)
		}
		ids[t.ID] = true
		if t.OccurredAt.IsZero() {
			add("%s.occurred_at: missing", field)
		} else if i > 0 && !t.OccurredAt.After(s.Transcripts[i-1].OccurredAt) {
			add("%s.occurred_at: %s is not after the previous transcript's", field, t.OccurredAt.Format(time.RFC3339))
		}
		if err := t.Transcript(s.Scope).Validate(now, transcript.Limits{}); err != nil {
			add("%s: %v", field, err)
		}
	}
	e := s.Expect
	if len(e.Current)+len(e.Superseded)+len(e.Retracted)+len(e.SideBySide)+len(e.Absent)+len(e.Reinforced)+len(e.DependsOn) == 0 {
		add("expect: no expected belief (current, superseded, retracted, side_by_side, absent, reinforced or depends_on)")
	}
	check := func(field string, ms []Match, reasons bool) {
		for i, m := range ms {
			for _, p := range m.problems(reasons) {
				add("expect.%s[%d]: %s", field, i, p)
			}
		}
	}
	check("current", e.Current, false)
	check("superseded", e.Superseded, true)
	check("retracted", e.Retracted, true)
	check("absent", e.Absent, false)
	check("reinforced", e.Reinforced, false)
	for i, group := range e.SideBySide {
		if len(group) < 2 {
			add("expect.side_by_side[%d]: a group needs at least two beliefs", i)
		}
		check(fmt.Sprintf("side_by_side[%d]", i), group, false)
	}
	for i, d := range e.DependsOn {
		for _, p := range d.Belief.problems(false) {
			add("expect.depends_on[%d].belief: %s", i, p)
		}
		for _, p := range d.On.problems(false) {
			add("expect.depends_on[%d].on: %s", i, p)
		}
	}
	for i, q := range e.Questions {
		field := fmt.Sprintf("expect.questions[%d]", i)
		if strings.TrimSpace(q.Q) == "" {
			add("%s.q: empty", field)
		}
		if len(q.AnyOf) == 0 {
			add("%s.any_of: empty", field)
		}
		for _, p := range q.AnyOf {
			if Normalize(p) == "" {
				add("%s.any_of: %q has no letter or digit", field, p)
			}
		}
		if h := memory.IsHistorical(q.Q); h != q.Historical {
			add("%s: historical is %t but recall reads %q as %s", field, q.Historical, q.Q, map[bool]string{true: "about the past", false: "about the present"}[h])
		}
	}
	return ps
}

func (m Match) problems(reasons bool) []string {
	var ps []string
	if len(m.AllOf) == 0 && len(m.AnyOf) == 0 {
		ps = append(ps, "needs all_of or any_of")
	}
	for _, list := range [][]string{m.AllOf, m.AnyOf, m.NoneOf} {
		for _, p := range list {
			if Normalize(p) == "" {
				ps = append(ps, fmt.Sprintf("phrase %q has no letter or digit", p))
			}
		}
	}
	if m.Attribute != "" && Normalize(m.Attribute) == "" {
		ps = append(ps, fmt.Sprintf("attribute %q has no letter or digit", m.Attribute))
	}
	switch {
	case !reasons && m.Reason != "":
		ps = append(ps, "reason is only for superseded and retracted beliefs")
	case m.Reason != "" && m.Reason != string(memory.ReasonTemporal) && m.Reason != string(memory.ReasonCorrection):
		ps = append(ps, fmt.Sprintf("reason %q is not temporal or correction", m.Reason))
	}
	return ps
}

// Transcript is t as enqueue input in scope.
func (t Transcript) Transcript(scope string) transcript.Transcript {
	at := t.OccurredAt
	return transcript.Transcript{Scope: scope, ID: t.ID, OccurredAt: &at, Messages: t.Messages}
}

// Filter keeps the scenarios whose category or name is in only; every entry of only
// must select something. No entries keep everything.
func Filter(scenarios []Scenario, only []string) ([]Scenario, error) {
	if len(only) == 0 {
		return scenarios, nil
	}
	used := map[string]bool{}
	var out []Scenario
	for _, s := range scenarios {
		if slices.Contains(only, s.Category) || slices.Contains(only, s.Name) {
			out = append(out, s)
			used[s.Category], used[s.Name] = true, true
		}
	}
	for _, o := range only {
		if !used[o] {
			return nil, fmt.Errorf("--only %s: no scenario has that category or name", o)
		}
	}
	return out, nil
}

// categoryOrder sorts categories: the known ones in Categories order, then the others
// by name.
func categoryOrder(a, b string) int {
	ia, ib := slices.Index(Categories, a), slices.Index(Categories, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia - ib
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	}
	return strings.Compare(a, b)
}
