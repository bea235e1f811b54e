package eval

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/credohq/credo/memory"
)

// Decision is what the pipeline did with an expected belief, read from its status.
type Decision string

// The decisions, one per status a matching belief can have, and none.
const (
	Keep      Decision = "keep"      // an active belief matches
	Supersede Decision = "supersede" // a superseded belief matches
	Retract   Decision = "retract"   // a retracted belief matches
	Missing   Decision = "missing"   // no belief matches
)

// Check kinds, one per kind of expectation.
const (
	CheckCurrent    = "current"
	CheckSideBySide = "side_by_side"
	CheckReinforced = "reinforced"
	CheckAbsent     = "absent"
	CheckSuperseded = "superseded"
	CheckRetracted  = "retracted"
	CheckDependsOn  = "depends_on"
	CheckQuestion   = "question"
)

// Check is one expectation of a scenario against what memory holds.
type Check struct {
	Kind   string `json:"kind"`
	Expect string `json:"expect"`
	// Want and Got are the expected and observed decisions of an expected belief
	// (current, side_by_side, reinforced, superseded and retracted checks).
	Want Decision `json:"want,omitempty"`
	Got  Decision `json:"got,omitempty"`
	Pass bool     `json:"pass"`
	// Seen is what the check looked at: the matching beliefs as "status: statement"
	// (followed by " <- " and the beliefs it rests on, for a depends_on check), or the
	// recalled statements of a question.
	Seen []string `json:"seen,omitempty"`
}

// Episode is what extracting one transcript cost.
type Episode struct {
	Transcript       string              `json:"transcript"`
	EpisodeID        int64               `json:"episode_id"`
	State            memory.EpisodeState `json:"state"`
	Attempts         int                 `json:"attempts"`
	ChatCalls        int                 `json:"chat_calls"`
	PromptTokens     int                 `json:"prompt_tokens"`
	CompletionTokens int                 `json:"completion_tokens"`
	Examples         int                 `json:"examples"`
	Duration         time.Duration       `json:"-"`
	DurationMs       float64             `json:"duration_ms"`
	Error            string              `json:"error,omitempty"`
}

// Consolidation is what consolidating one scope cost and did.
type Consolidation struct {
	ChatCalls        int `json:"chat_calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Applied counts the resolutions the engine applied.
	Applied int `json:"applied"`
}

// Observation is what the pipeline left in one scenario's scope, and what it cost.
type Observation struct {
	// Beliefs are every belief of the scope; forgotten ones are ignored.
	Beliefs []memory.Belief
	// Events are the scope's revision events, which say why a belief was retired.
	Events []memory.Event
	// Answers are the statements recalled for each question, in question order.
	Answers       [][]string
	Episodes      []Episode
	Consolidation Consolidation
}

// ScenarioResult is one scenario's checks and costs.
type ScenarioResult struct {
	Name          string        `json:"name"`
	Category      string        `json:"category"`
	Scope         string        `json:"scope"`
	Passed        int           `json:"passed"`
	Checks        []Check       `json:"checks"`
	Episodes      []Episode     `json:"episodes"`
	Consolidation Consolidation `json:"consolidation"`
	// Errors are the steps that failed after extraction (consolidation, recall); the
	// checks score what memory holds regardless.
	Errors []string `json:"errors,omitempty"`
	// Revisions are the scope's revisions per origin, with the ones an operator would
	// revert and their precision, as `beliefs audit` reads a scope (see precision.go).
	Revisions []memory.AuditOrigin `json:"revisions"`
}

// Score checks what o holds against what s expects.
func Score(s Scenario, o Observation) ScenarioResult {
	res := ScenarioResult{Name: s.Name, Category: s.Category, Scope: s.Scope, Episodes: o.Episodes, Consolidation: o.Consolidation}
	if res.Episodes == nil {
		res.Episodes = []Episode{}
	}
	sc := newScorer(o)
	e := s.Expect
	res.Revisions = revisionAudit(e, sc, o.Events)
	for _, m := range e.Current {
		res.Checks = append(res.Checks, sc.decide(CheckCurrent, m, Keep))
	}
	for _, group := range e.SideBySide {
		for _, m := range group {
			res.Checks = append(res.Checks, sc.decide(CheckSideBySide, m, Keep))
		}
	}
	for _, m := range e.Reinforced {
		res.Checks = append(res.Checks, sc.reinforced(m))
	}
	for _, m := range e.Absent {
		res.Checks = append(res.Checks, sc.absent(m))
	}
	for _, m := range e.Superseded {
		res.Checks = append(res.Checks, sc.decide(CheckSuperseded, m, Supersede))
	}
	for _, m := range e.Retracted {
		res.Checks = append(res.Checks, sc.decide(CheckRetracted, m, Retract))
	}
	for _, d := range e.DependsOn {
		res.Checks = append(res.Checks, sc.dependsOn(d))
	}
	for i, q := range e.Questions {
		var answer []string
		if i < len(o.Answers) {
			answer = o.Answers[i]
		}
		res.Checks = append(res.Checks, question(q, answer))
	}
	for _, c := range res.Checks {
		if c.Pass {
			res.Passed++
		}
	}
	return res
}

// scorer checks expectations against the beliefs of one scope.
type scorer struct {
	// beliefs are the scope's beliefs but the forgotten ones; byID indexes them.
	beliefs []memory.Belief
	byID    map[int64]memory.Belief
	// reason says why each retired belief was retired; absorbed holds the beliefs
	// that absorbed a duplicate.
	reason   map[int64]memory.Reason
	absorbed map[int64]bool
}

func newScorer(o Observation) *scorer {
	sc := &scorer{byID: map[int64]memory.Belief{}, reason: map[int64]memory.Reason{}, absorbed: map[int64]bool{}}
	for _, b := range o.Beliefs {
		if b.Status != memory.StatusForgotten {
			sc.beliefs = append(sc.beliefs, b)
			sc.byID[b.ID] = b
		}
	}
	for _, e := range o.Events {
		if e.Action == memory.ActionReinforce {
			continue
		}
		if _, ok := sc.reason[e.OldBeliefID]; !ok {
			sc.reason[e.OldBeliefID] = e.Reason
		}
		if e.Action == memory.ActionSupersede && e.Reason == memory.ReasonDuplicate && e.NewBeliefID != nil {
			sc.absorbed[*e.NewBeliefID] = true
		}
	}
	return sc
}

// describe is b as a check shows it: "superseded (temporal): User lives in New York".
func (sc *scorer) describe(b memory.Belief) string {
	st := string(b.Status)
	if r, ok := sc.reason[b.ID]; ok && b.Status != memory.StatusActive {
		st += " (" + string(r) + ")"
	}
	if b.ReinforcedCount > 0 {
		st += fmt.Sprintf(" (reinforced %d)", b.ReinforcedCount)
	}
	return st + ": " + b.Statement
}

// matching are the beliefs m selects, and how a check shows them.
func (sc *scorer) matching(m Match) (ms []memory.Belief, seen []string) {
	for _, b := range sc.beliefs {
		if m.Belief(b) {
			ms = append(ms, b)
			seen = append(seen, sc.describe(b))
		}
	}
	return ms, seen
}

// decide checks that a belief matching m got decision want (and, for a retired one,
// was retired for m.Reason when it is given).
func (sc *scorer) decide(kind string, m Match, want Decision) Check {
	ms, seen := sc.matching(m)
	made := map[Decision]bool{}
	for _, b := range ms {
		made[decisionOf(b.Status)] = true
	}
	got := Missing
	if made[want] {
		got = want
	} else {
		for _, d := range []Decision{Keep, Supersede, Retract} {
			if made[d] {
				got = d
				break
			}
		}
	}
	c := Check{Kind: kind, Expect: m.String(), Want: want, Got: got, Pass: got == want, Seen: seen}
	if want == Supersede || want == Retract {
		// History: the right status, for the right reason.
		c.Pass = false
		for _, b := range ms {
			if decisionOf(b.Status) == want && (m.Reason == "" || string(sc.reason[b.ID]) == m.Reason) {
				c.Pass = true
			}
		}
	}
	return c
}

// reinforced checks that exactly one active belief matches m, and that it was
// reinforced or absorbed a duplicate.
func (sc *scorer) reinforced(m Match) Check {
	c := sc.decide(CheckReinforced, m, Keep)
	ms, _ := sc.matching(m)
	var active []memory.Belief
	for _, b := range ms {
		if b.Status == memory.StatusActive {
			active = append(active, b)
		}
	}
	c.Pass = len(active) == 1 && (active[0].ReinforcedCount > 0 || sc.absorbed[active[0].ID])
	return c
}

// absent checks that no active belief matches m.
func (sc *scorer) absent(m Match) Check {
	ms, seen := sc.matching(m)
	pass := true
	for _, b := range ms {
		if b.Status == memory.StatusActive {
			pass = false
		}
	}
	return Check{Kind: CheckAbsent, Expect: m.String(), Pass: pass, Seen: seen}
}

// dependsOn checks that a belief matching d.Belief was concluded from a belief
// matching d.On. Seen shows each belief matching d.Belief with what it rests on.
func (sc *scorer) dependsOn(d Dependency) Check {
	c := Check{Kind: CheckDependsOn, Expect: d.String()}
	ms, seen := sc.matching(d.Belief)
	for i, b := range ms {
		var bases []string
		for _, id := range b.DependsOn {
			basis, ok := sc.byID[id]
			if !ok {
				bases = append(bases, fmt.Sprintf("belief %d (forgotten or erased)", id))
				continue
			}
			bases = append(bases, sc.describe(basis))
			if d.On.Belief(basis) {
				c.Pass = true
			}
		}
		if len(bases) == 0 {
			bases = []string{"nothing"}
		}
		seen[i] += " <- " + strings.Join(bases, "; ")
	}
	c.Seen = seen
	return c
}

// question checks that one of the recalled statements answers q.
func question(q Question, answer []string) Check {
	pass := false
	for _, st := range answer {
		if anyOf(Normalize(st), q.AnyOf) {
			pass = true
		}
	}
	expect := q.Q + " [" + strings.Join(q.AnyOf, "|") + "]"
	return Check{Kind: CheckQuestion, Expect: expect, Pass: pass, Seen: answer}
}

func decisionOf(s memory.Status) Decision {
	switch s {
	case memory.StatusActive:
		return Keep
	case memory.StatusSuperseded:
		return Supersede
	case memory.StatusRetracted:
		return Retract
	}
	return Missing
}

// Decisions is the precision and recall of one decision over the expected beliefs.
type Decisions struct {
	// Expected counts expected beliefs that should have this decision; Made those
	// that got it; Correct those that should have and got it.
	Expected int `json:"expected"`
	Made     int `json:"made"`
	Correct  int `json:"correct"`
	// Precision is Correct/Made, Recall Correct/Expected; null when the divisor is 0.
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
}

// Ratio is a share of passed checks.
type Ratio struct {
	Passed int `json:"passed"`
	Total  int `json:"total"`
	// Accuracy is Passed/Total; null when Total is 0.
	Accuracy *float64 `json:"accuracy"`
}

// Cost is what the LLM was asked.
type Cost struct {
	// Extraction: every chat call of every attempt, malformed answers asked again
	// included.
	ExtractionCalls            int `json:"extraction_calls"`
	ExtractionPromptTokens     int `json:"extraction_prompt_tokens"`
	ExtractionCompletionTokens int `json:"extraction_completion_tokens"`
	// Examples are the past revisions shown as worked examples, over all prompts.
	Examples                      int `json:"examples"`
	ConsolidationCalls            int `json:"consolidation_calls"`
	ConsolidationPromptTokens     int `json:"consolidation_prompt_tokens"`
	ConsolidationCompletionTokens int `json:"consolidation_completion_tokens"`
	// Per episode: every chat call and token (extraction and consolidation) divided by
	// the number of episodes.
	CallsPerEpisode float64 `json:"calls_per_episode"`
	// ChatCallsPerEpisode are the extraction's calls alone: 1.000 when every transcript
	// fit the model's window in one prompt.
	ChatCallsPerEpisode float64 `json:"chat_calls_per_episode"`
	TokensPerEpisode    float64 `json:"tokens_per_episode"`
	ExamplesPerEpisode  float64 `json:"examples_per_episode"`
}

// Latency is the wall time of extracting one episode (all its attempts: prompt, LLM
// call, embedding and apply), in milliseconds.
type Latency struct {
	P50 *float64 `json:"p50_ms"`
	P95 *float64 `json:"p95_ms"`
}

// Metrics are the scores of a set of scenarios.
type Metrics struct {
	Scenarios int `json:"scenarios"`
	Episodes  int `json:"episodes"`
	// Failed counts episodes not applied: the model's answers were malformed, or
	// every attempt failed.
	Failed    int       `json:"failed_episodes"`
	Supersede Decisions `json:"supersede"`
	Retract   Decisions `json:"retract"`
	Keep      Decisions `json:"keep"`
	// Current: current, side_by_side and reinforced beliefs that are current, and
	// absent ones that are not.
	Current Ratio `json:"current"`
	// History: superseded and retracted beliefs found with that status and reason.
	History Ratio `json:"history"`
	// Dependencies: depends_on checks passed, beliefs found concluded from their basis.
	Dependencies Ratio   `json:"dependencies"`
	Questions    Ratio   `json:"questions"`
	Cost         Cost    `json:"cost"`
	Latency      Latency `json:"latency"`
	// Errors counts consolidation passes and recalls that failed.
	Errors int `json:"errors"`
	// Revisions is the revision precision per origin, as `beliefs audit` reads it.
	Revisions []memory.AuditOrigin `json:"revisions"`
}

// CategoryMetrics are the metrics of one category.
type CategoryMetrics struct {
	Category string `json:"category"`
	Metrics
}

// Aggregate computes the metrics of each category (known categories first, in
// Categories order) and of all results together.
func Aggregate(results []ScenarioResult) (cats []CategoryMetrics, total Metrics) {
	by := map[string][]ScenarioResult{}
	var names []string
	for _, r := range results {
		if _, ok := by[r.Category]; !ok {
			names = append(names, r.Category)
		}
		by[r.Category] = append(by[r.Category], r)
	}
	slices.SortFunc(names, categoryOrder)
	for _, n := range names {
		cats = append(cats, CategoryMetrics{Category: n, Metrics: metricsOf(by[n])})
	}
	return cats, metricsOf(results)
}

func metricsOf(results []ScenarioResult) Metrics {
	var m Metrics
	var durations []time.Duration
	decisions := map[Decision]*Decisions{Supersede: &m.Supersede, Retract: &m.Retract, Keep: &m.Keep}
	for _, r := range results {
		m.Scenarios++
		for _, e := range r.Episodes {
			m.Episodes++
			if e.State != memory.EpisodeApplied {
				m.Failed++
			}
			m.Cost.ExtractionCalls += e.ChatCalls
			m.Cost.ExtractionPromptTokens += e.PromptTokens
			m.Cost.ExtractionCompletionTokens += e.CompletionTokens
			m.Cost.Examples += e.Examples
			durations = append(durations, e.Duration)
		}
		m.Cost.ConsolidationCalls += r.Consolidation.ChatCalls
		m.Cost.ConsolidationPromptTokens += r.Consolidation.PromptTokens
		m.Cost.ConsolidationCompletionTokens += r.Consolidation.CompletionTokens
		m.Errors += len(r.Errors)
		for _, c := range r.Checks {
			for d, ds := range decisions {
				if c.Want == "" {
					continue
				}
				if c.Want == d {
					ds.Expected++
				}
				if c.Got == d {
					ds.Made++
				}
				if c.Want == d && c.Got == d {
					ds.Correct++
				}
			}
			var ratio *Ratio
			switch c.Kind {
			case CheckCurrent, CheckSideBySide, CheckReinforced, CheckAbsent:
				ratio = &m.Current
			case CheckSuperseded, CheckRetracted:
				ratio = &m.History
			case CheckDependsOn:
				ratio = &m.Dependencies
			case CheckQuestion:
				ratio = &m.Questions
			default:
				continue
			}
			ratio.Total++
			if c.Pass {
				ratio.Passed++
			}
		}
	}
	for _, ds := range []*Decisions{&m.Supersede, &m.Retract, &m.Keep} {
		ds.Precision, ds.Recall = share(ds.Correct, ds.Made), share(ds.Correct, ds.Expected)
	}
	for _, r := range []*Ratio{&m.Current, &m.History, &m.Dependencies, &m.Questions} {
		r.Accuracy = share(r.Passed, r.Total)
	}
	if m.Episodes > 0 {
		n := float64(m.Episodes)
		c := &m.Cost
		c.CallsPerEpisode = round(float64(c.ExtractionCalls+c.ConsolidationCalls)/n, 2)
		c.ChatCallsPerEpisode = round(float64(c.ExtractionCalls)/n, 3)
		c.TokensPerEpisode = round(float64(c.ExtractionPromptTokens+c.ExtractionCompletionTokens+
			c.ConsolidationPromptTokens+c.ConsolidationCompletionTokens)/n, 1)
		c.ExamplesPerEpisode = round(float64(c.Examples)/n, 2)
	}
	m.Latency = Latency{P50: percentile(durations, 0.50), P95: percentile(durations, 0.95)}
	m.Revisions = revisionsOf(results)
	return m
}

func share(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	v := round(float64(n)/float64(d), 4)
	return &v
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// percentile is the nearest-rank p-th percentile of ds in milliseconds, nil when ds is
// empty.
func percentile(ds []time.Duration, p float64) *float64 {
	if len(ds) == 0 {
		return nil
	}
	s := slices.Clone(ds)
	slices.SortFunc(s, cmp.Compare)
	i := max(0, int(math.Ceil(p*float64(len(s))))-1)
	v := round(float64(s[i])/float64(time.Millisecond), 1)
	return &v
}
