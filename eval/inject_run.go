package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/credohq/credo/memory"
)

// Set is a labeled scenario set the gold model answers: the shipped one, the held-out
// one, or a file the shipped labels answer.
type Set struct {
	// Name is "shipped", "heldout" or the file's name.
	Name      string
	Scenarios []Scenario
	Labels    []Labels
}

// Names of the labeled sets.
const (
	SetShipped = "shipped"
	SetHeldOut = "heldout"
)

// InjectConfig configures RunInject: the pipeline of Config (whose Chat is the gold
// model's, and whose Containment the guards' settings when on), the mistakes, and how
// the gold model answers the second opinion.
type InjectConfig struct {
	Config
	Injections []Injection
	// Seed draws which opportunities a rate below 1 takes, and which candidates.
	Seed     uint64
	Verifier Verifier
}

// Outcomes of a mistake.
const (
	// OutcomeHeld: a review item of a containment cause on the mistake's target.
	OutcomeHeld = "held"
	// OutcomeApplied: a revision event of the mistake on its target.
	OutcomeApplied = "applied"
	// OutcomeRefused: a review item of another cause (entrenchment, time order, an
	// event, a target revised already) on its target.
	OutcomeRefused = "refused"
	// OutcomeNone: neither, e.g. stored as history before its target.
	OutcomeNone = "none"
)

// MistakeOutcome is one mistake and what the engine did with it.
type MistakeOutcome struct {
	Mistake
	Outcome string `json:"outcome"`
	// Cause is the review item's cause when held or refused.
	Cause memory.Cause `json:"cause,omitempty"`
}

// GuardRun is what the mistakes of one kind did in one run, guards on or off.
type GuardRun struct {
	Guards bool `json:"guards"`
	// Made counts the mistaken directives: Held + Applied + Refused + None.
	Made    int `json:"made"`
	Held    int `json:"held"`
	Applied int `json:"applied"`
	Refused int `json:"refused"`
	None    int `json:"none"`
	// Unrelated are the wrong targets on another slot than the fact's (WrongTarget
	// only): the ones the word guards were to hold.
	Unrelated *Share `json:"unrelated,omitempty"`
	// Parts are the mistakes by Mistake.Part.
	Parts map[string]*Share `json:"parts,omitempty"`
	// Causes count the held mistakes by cause.
	Causes map[memory.Cause]int `json:"causes,omitempty"`
	// Scenarios are those where a mistake was made; Wrong those whose current memory
	// fails an expectation (current, side_by_side, reinforced, absent) at the end;
	// Lost those where a belief expected current was retired.
	Scenarios []string         `json:"scenarios"`
	Wrong     []string         `json:"wrong"`
	Lost      []string         `json:"lost"`
	Mistakes  []MistakeOutcome `json:"mistakes"`
	Calls     Calls            `json:"calls"`
	Seconds   float64          `json:"seconds"`
}

// Share is a subset of a run's mistakes and how many of them were held.
type Share struct {
	Made int `json:"made"`
	Held int `json:"held"`
}

// Calls are the gold model's prompts in a run, and per episode with and without the
// second opinion's.
type Calls struct {
	Episodes int `json:"episodes"`
	GoldCalls
	// PerEpisode are the extraction and verification calls per episode;
	// WithoutVerification the extraction calls alone.
	PerEpisode          float64 `json:"per_episode"`
	WithoutVerification float64 `json:"per_episode_without_verification"`
}

func newCalls(episodes int, c GoldCalls) Calls {
	out := Calls{Episodes: episodes, GoldCalls: c}
	if episodes > 0 {
		out.PerEpisode = round(float64(c.Extraction+c.Verification)/float64(episodes), 3)
		out.WithoutVerification = round(float64(c.Extraction)/float64(episodes), 3)
	}
	return out
}

// KindResult is one mistake measured with the guards on and off.
type KindResult struct {
	Injection
	On  GuardRun `json:"guards_on"`
	Off GuardRun `json:"guards_off"`
}

// Hold is a review item of a containment cause.
type Hold struct {
	Scenario  string        `json:"scenario"`
	Cause     memory.Cause  `json:"cause"`
	Action    memory.Action `json:"action"`
	Target    string        `json:"target"`
	Statement string        `json:"statement,omitempty"`
	Detail    string        `json:"detail"`
}

// Baseline is the run with correct answers and the guards on: what they hold is a
// false hold.
type Baseline struct {
	Scenarios  int      `json:"scenarios"`
	FalseHolds []Hold   `json:"false_holds"`
	Wrong      []string `json:"wrong"`
	// Stats are what the gold model could not answer from its labels: zero, with the
	// shipped labels.
	Stats   GoldStats `json:"gold"`
	Calls   Calls     `json:"calls"`
	Total   Metrics   `json:"total"`
	Seconds float64   `json:"seconds"`
}

// InjectReport is what eval --inject prints: a part per scenario set.
type InjectReport struct {
	EmbedProvider string `json:"embed_provider"`
	EmbedModel    string `json:"embed_model"`
	// Scenarios is where the sets come from: the shipped file, or the one --scenarios
	// named.
	Scenarios string      `json:"scenarios"`
	Seed      uint64      `json:"seed"`
	Verifier  Verifier    `json:"verifier"`
	Sets      []InjectSet `json:"sets"`
}

// InjectSet is what eval --inject measured on one scenario set.
type InjectSet struct {
	Set      string       `json:"set"`
	Baseline Baseline     `json:"baseline"`
	Kinds    []KindResult `json:"kinds"`
	// WordPassing sums the kinds of WordPassing measured, with the guards on: the
	// mistakes made and held, and the scenarios that lost a belief.
	WordPassing *WordPassingSum `json:"word_passing,omitempty"`
}

// WordPassingSum sums mistakes of the word-passing kinds with the guards on.
type WordPassingSum struct {
	Share
	Lost int `json:"lost"`
}

// RunInject runs each set's scenarios with the gold model, first answering correctly
// with the guards on (the baseline: its holds are false holds), then, for each
// injection, making that mistake with the guards on and with them off, and reports what
// each mistake became and which scenarios it left wrong. Each run has a schema of its
// own.
func RunInject(ctx context.Context, sets []Set, cfg InjectConfig) (*InjectReport, error) {
	if len(cfg.Injections) == 0 {
		return nil, errors.New("eval: no mistake to inject")
	}
	v, err := ParseVerifier(string(cfg.Verifier))
	if err != nil {
		return nil, err
	}
	rep := &InjectReport{Seed: cfg.Seed, Verifier: v}
	for _, set := range sets {
		is := InjectSet{Set: set.Name}
		opts := GoldOptions{Seed: cfg.Seed, Verifier: v}
		base, err := goldRun(ctx, set, cfg.Config, opts, true, set.Name+": correct answers")
		if err != nil {
			return nil, err
		}
		is.Baseline = Baseline{Scenarios: len(set.Scenarios), FalseHolds: append([]Hold{}, base.holds...),
			Wrong: append([]string{}, base.wrong...), Stats: base.stats, Calls: base.calls, Total: base.res.Total, Seconds: base.res.Seconds}
		for _, inj := range cfg.Injections {
			kr := KindResult{Injection: inj}
			for _, guards := range []bool{true, false} {
				opts.Inject = &inj
				r, err := goldRun(ctx, set, cfg.Config, opts, guards, set.Name+": "+inj.String())
				if err != nil {
					return nil, err
				}
				g := r.guardRun(guards)
				if guards {
					kr.On = g
				} else {
					kr.Off = g
				}
			}
			if slices.Contains(WordPassing, inj.Kind) {
				if is.WordPassing == nil {
					is.WordPassing = &WordPassingSum{}
				}
				is.WordPassing.Made += kr.On.Made
				is.WordPassing.Held += kr.On.Held
				is.WordPassing.Lost += len(kr.On.Lost)
			}
			is.Kinds = append(is.Kinds, kr)
		}
		rep.Sets = append(rep.Sets, is)
	}
	return rep, nil
}

// injected is one run of the gold model.
type injected struct {
	res       *RunResult
	mistakes  []MistakeOutcome
	holds     []Hold
	wrong     []string
	lost      []string
	stats     GoldStats
	calls     Calls
	revisions []Revision
}

// goldRun runs set with the gold model answering as opts say, the guards on or off;
// what names the run in progress lines.
func goldRun(ctx context.Context, set Set, cfg Config, opts GoldOptions, guards bool, what string) (*injected, error) {
	gold, err := NewGoldWith(set.Scenarios, set.Labels, opts)
	if err != nil {
		return nil, err
	}
	scenarios, _ := gold.Scenarios()
	c := cfg
	c.Chat = gold
	c.Containment.Off = !guards
	start := time.Now()
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "%s, guards %s: %d scenarios\n", what, onOff(guards), len(scenarios))
	}
	// What each scope holds is read before the schema goes; the mistakes were all made
	// by then, extraction being done.
	scopes := make([]scopeState, len(scenarios))
	res, err := run(ctx, scenarios, c, func(ctx context.Context, store *memory.Store, i int, episodes []int64) error {
		st, err := readScope(ctx, store, scenarios[i].Scope)
		st.episodes = episodes
		scopes[i] = st
		return err
	})
	if err != nil {
		return nil, err
	}
	episodes := 0
	for _, s := range scenarios {
		episodes += len(s.Transcripts)
	}
	out := &injected{res: res, stats: gold.Stats(), calls: newCalls(episodes, gold.Calls()), revisions: gold.Revisions()}
	byName := map[string]int{}
	for i, s := range scenarios {
		byName[s.Name] = i
		out.holds = append(out.holds, scopes[i].holds(s)...)
	}
	for _, sr := range res.Scenarios {
		wrong, lost := memoryWrong(sr)
		if wrong {
			out.wrong = append(out.wrong, sr.Name)
		}
		if lost {
			out.lost = append(out.lost, sr.Name)
		}
	}
	// In scenario and transcript order, whatever order the prompts came in.
	mistakes := gold.Mistakes()
	slices.SortStableFunc(mistakes, func(a, b Mistake) int {
		ia, ib := byName[a.Scenario], byName[b.Scenario]
		return cmp.Or(ia-ib, transcriptIndex(scenarios[ia], a.Transcript)-transcriptIndex(scenarios[ib], b.Transcript))
	})
	used := make([]used, len(scenarios))
	for _, m := range mistakes {
		i := byName[m.Scenario]
		mo, err := scopes[i].classify(scenarios[i], m, &used[i])
		if err != nil {
			return nil, err
		}
		out.mistakes = append(out.mistakes, mo)
	}
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "%s, guards %s: %d mistakes in %s\n", what, onOff(guards), len(mistakes), time.Since(start).Round(100*time.Millisecond))
		if res.SchemaKept {
			fmt.Fprintf(c.Progress, "%s, guards %s: schema %s kept; drop it with DROP SCHEMA %s CASCADE\n", what, onOff(guards), res.Schema, res.Schema)
		}
	}
	return out, nil
}

// transcriptIndex is the place of transcript id in s.
func transcriptIndex(s Scenario, id string) int {
	return slices.IndexFunc(s.Transcripts, func(t Transcript) bool { return t.ID == id })
}

// guardRun sums the run's mistakes.
func (r *injected) guardRun(guards bool) GuardRun {
	g := GuardRun{Guards: guards, Mistakes: r.mistakes, Calls: r.calls, Seconds: r.res.Seconds, Scenarios: []string{}, Wrong: []string{},
		Lost: []string{}}
	if g.Mistakes == nil {
		g.Mistakes = []MistakeOutcome{}
	}
	in := map[string]bool{}
	for _, m := range r.mistakes {
		g.Made++
		switch m.Outcome {
		case OutcomeHeld:
			g.Held++
		case OutcomeApplied:
			g.Applied++
		case OutcomeRefused:
			g.Refused++
		case OutcomeNone:
			g.None++
		}
		if m.Unrelated {
			if g.Unrelated == nil {
				g.Unrelated = &Share{}
			}
			g.Unrelated.Made++
			if m.Outcome == OutcomeHeld {
				g.Unrelated.Held++
			}
		}
		if m.Part != "" {
			if g.Parts == nil {
				g.Parts = map[string]*Share{}
			}
			if g.Parts[m.Part] == nil {
				g.Parts[m.Part] = &Share{}
			}
			g.Parts[m.Part].Made++
			if m.Outcome == OutcomeHeld {
				g.Parts[m.Part].Held++
			}
		}
		if m.Outcome == OutcomeHeld {
			if g.Causes == nil {
				g.Causes = map[memory.Cause]int{}
			}
			g.Causes[m.Cause]++
		}
		if !in[m.Scenario] {
			in[m.Scenario] = true
			g.Scenarios = append(g.Scenarios, m.Scenario)
		}
	}
	g.Wrong = append(g.Wrong, r.wrong...)
	g.Lost = append(g.Lost, r.lost...)
	return g
}

// memoryWrong says whether a scenario's current memory fails its expectations, and
// whether it lost a belief it should hold (one expected current, now retired).
func memoryWrong(sr ScenarioResult) (wrong, lost bool) {
	for _, c := range sr.Checks {
		switch c.Kind {
		case CheckCurrent, CheckSideBySide, CheckReinforced, CheckAbsent:
		default:
			continue
		}
		if c.Pass {
			continue
		}
		wrong = true
		if c.Kind != CheckAbsent && (c.Got == Supersede || c.Got == Retract) {
			lost = true
		}
	}
	return wrong, lost
}

// scopeState is what one scenario's scope holds at the end of a run.
type scopeState struct {
	episodes  []int64
	beliefs   []memory.Belief
	events    []memory.Event
	conflicts []memory.Conflict
}

func readScope(ctx context.Context, store *memory.Store, scope string) (scopeState, error) {
	var (
		st  scopeState
		err error
	)
	if st.beliefs, err = store.All(ctx, scope); err != nil {
		return st, err
	}
	if st.events, err = store.Events(ctx, scope, 0); err != nil {
		return st, err
	}
	st.conflicts, err = store.Conflicts(ctx, scope, true)
	return st, err
}

// holds are the scope's review items of a containment cause.
func (st *scopeState) holds(s Scenario) []Hold {
	var out []Hold
	for _, c := range st.conflicts {
		if c.Kind != memory.ConflictRefused || c.Cause == nil || !c.Cause.Held() {
			continue
		}
		h := Hold{Scenario: s.Name, Cause: *c.Cause, Action: c.Action, Statement: c.Statement, Detail: c.Detail}
		if c.TargetID != nil {
			h.Target = st.statement(*c.TargetID)
		}
		out = append(out, h)
	}
	return out
}

func (st *scopeState) statement(id int64) string {
	for _, b := range st.beliefs {
		if b.ID == id {
			return b.Statement
		}
	}
	return ""
}

// used are the events and review items that already account for a mistake: two
// mistakes on one target are never both read from one of them.
type used struct {
	events, conflicts map[int64]bool
}

// classify finds what became of m: a review item on its target from its episode, or a
// revision event of it.
func (st *scopeState) classify(s Scenario, m Mistake, u *used) (MistakeOutcome, error) {
	if u.events == nil {
		u.events, u.conflicts = map[int64]bool{}, map[int64]bool{}
	}
	mo := MistakeOutcome{Mistake: m, Outcome: OutcomeNone}
	ep := int64(0)
	if j := transcriptIndex(s, m.Transcript); j >= 0 && j < len(st.episodes) {
		ep = st.episodes[j]
	}
	target := map[int64]bool{}
	for _, b := range st.beliefs {
		if b.Status != memory.StatusForgotten && oneSpace(b.Statement) == oneSpace(m.Target) {
			target[b.ID] = true
		}
	}
	var item *memory.Conflict
	for i, c := range st.conflicts {
		if c.Kind == memory.ConflictRefused && !u.conflicts[c.ID] && c.Origin == memory.RevisionExtraction && c.EpisodeID != nil &&
			*c.EpisodeID == ep && c.TargetID != nil && target[*c.TargetID] && c.Action == m.Action {
			item = &st.conflicts[i]
			break
		}
	}
	var event *memory.Event
	for i, e := range st.events {
		if !u.events[e.ID] && e.Origin == memory.RevisionExtraction && e.EpisodeID != nil && *e.EpisodeID == ep &&
			target[e.OldBeliefID] && e.Action == m.Action && e.Reason == m.Reason {
			event = &st.events[i]
			break
		}
	}
	held := item != nil && item.Cause.Held()
	switch {
	case held && event != nil:
		return mo, fmt.Errorf("eval: %s/%s: the %s of %q was both held (item %d) and applied (event %d)",
			m.Scenario, m.Transcript, m.Action, m.Target, item.ID, event.ID)
	case item != nil:
		u.conflicts[item.ID] = true
		mo.Outcome, mo.Cause = OutcomeRefused, *item.Cause
		if held {
			mo.Outcome = OutcomeHeld
		}
	case event != nil:
		u.events[event.ID] = true
		mo.Outcome = OutcomeApplied
	}
	return mo, nil
}
