package eval_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/memory"
)

func belief(id int64, status memory.Status, statement string) memory.Belief {
	return memory.Belief{ID: id, Status: status, Statement: statement, Attribute: "location"}
}

func event(action memory.Action, reason memory.Reason, old int64, newID *int64) memory.Event {
	return memory.Event{Action: action, Reason: reason, OldBeliefID: old, NewBeliefID: newID}
}

var moveScenario = eval.Scenario{
	Name: "m", Category: "move", Scope: "eval:m",
	Expect: eval.Expect{
		Current:    []eval.Match{{AnyOf: []string{"miami"}}},
		Superseded: []eval.Match{{AnyOf: []string{"new york"}, Reason: "temporal"}},
		Absent:     []eval.Match{{AnyOf: []string{"new york"}, NoneOf: []string{"moved"}}},
		Questions: []eval.Question{
			{Q: "Where does the user live?", AnyOf: []string{"miami"}},
			{Q: "Where did the user live before?", AnyOf: []string{"new york"}, Historical: true},
		},
	},
}

func TestScoreRightRevision(t *testing.T) {
	r := eval.Score(moveScenario, eval.Observation{
		Beliefs: []memory.Belief{
			belief(1, memory.StatusSuperseded, "User lives in New York"),
			belief(2, memory.StatusActive, "User lives in Miami"),
			belief(3, memory.StatusActive, "User moved from New York to Miami"),
		},
		Events:  []memory.Event{event(memory.ActionSupersede, memory.ReasonTemporal, 1, new(int64(2)))},
		Answers: [][]string{{"User lives in Miami"}, {"User lives in New York", "User lives in Miami"}},
	})
	require.Equal(t, 5, r.Passed, "%+v", r.Checks)
	require.Equal(t, []string{"superseded (temporal): User lives in New York"}, r.Checks[2].Seen[:1])
	_, total := eval.Aggregate([]eval.ScenarioResult{r})
	require.Equal(t, eval.Decisions{Expected: 1, Made: 1, Correct: 1, Precision: new(float64(1)), Recall: new(float64(1))}, total.Supersede)
	require.Equal(t, eval.Decisions{Expected: 1, Made: 1, Correct: 1, Precision: new(float64(1)), Recall: new(float64(1))}, total.Keep)
	require.Equal(t, eval.Decisions{}, total.Retract)
	require.Equal(t, eval.Ratio{Passed: 2, Total: 2, Accuracy: new(float64(1))}, total.Current)
	require.Equal(t, eval.Ratio{Passed: 1, Total: 1, Accuracy: new(float64(1))}, total.History)
	require.Equal(t, eval.Ratio{Passed: 2, Total: 2, Accuracy: new(float64(1))}, total.Questions)
}

// A revision for the wrong reason is a supersession all the same, so only history
// drops.
func TestScoreWrongReason(t *testing.T) {
	r := eval.Score(moveScenario, eval.Observation{
		Beliefs: []memory.Belief{belief(1, memory.StatusSuperseded, "User lives in New York"), belief(2, memory.StatusActive, "User lives in Miami")},
		Events:  []memory.Event{event(memory.ActionSupersede, memory.ReasonCorrection, 1, new(int64(2)))},
		Answers: [][]string{{"User lives in Miami"}, {"User lives in New York"}},
	})
	_, total := eval.Aggregate([]eval.ScenarioResult{r})
	require.Equal(t, new(float64(1)), total.Supersede.Recall)
	require.Equal(t, new(float64(1)), total.Current.Accuracy)
	require.Equal(t, eval.Ratio{Passed: 0, Total: 1, Accuracy: new(float64(0))}, total.History)
}

// A stale belief left current: a missed supersession (recall), a wrong keep
// (precision), and a wrong current state.
func TestScoreMissedRevision(t *testing.T) {
	r := eval.Score(moveScenario, eval.Observation{
		Beliefs: []memory.Belief{belief(1, memory.StatusActive, "User lives in New York"), belief(2, memory.StatusActive, "User lives in Miami")},
		Answers: [][]string{{"User lives in New York"}, {"User lives in New York"}},
	})
	_, total := eval.Aggregate([]eval.ScenarioResult{r})
	require.Equal(t, eval.Decisions{Expected: 1, Made: 0, Correct: 0, Recall: new(float64(0))}, total.Supersede)
	require.Equal(t, eval.Decisions{Expected: 1, Made: 2, Correct: 1, Precision: new(0.5), Recall: new(float64(1))}, total.Keep)
	require.Equal(t, eval.Ratio{Passed: 1, Total: 2, Accuracy: new(0.5)}, total.Current)
	require.Equal(t, eval.Ratio{Passed: 0, Total: 1, Accuracy: new(float64(0))}, total.History)
	require.Equal(t, eval.Ratio{Passed: 1, Total: 2, Accuracy: new(0.5)}, total.Questions)
	require.Equal(t, eval.Keep, r.Checks[2].Got)
}

func TestScoreReinforcedAndSideBySide(t *testing.T) {
	s := eval.Scenario{Name: "r", Category: "restatement", Expect: eval.Expect{
		Reinforced: []eval.Match{{AnyOf: []string{"seattle"}}},
		SideBySide: [][]eval.Match{{{AnyOf: []string{"chrome"}}, {AnyOf: []string{"firefox"}}}},
		Retracted:  []eval.Match{{AnyOf: []string{"kafka"}}},
	}}
	score := func(bs []memory.Belief, evs []memory.Event) eval.ScenarioResult {
		return eval.Score(s, eval.Observation{Beliefs: bs, Events: evs})
	}
	reinforced := belief(1, memory.StatusActive, "User lives in Seattle")
	reinforced.ReinforcedCount = 1
	chrome, firefox := belief(2, memory.StatusActive, "User uses Chrome at work"), belief(3, memory.StatusActive, "User uses Firefox at home")
	kafka := belief(4, memory.StatusRetracted, "Team migrates to Kafka")

	r := score([]memory.Belief{reinforced, chrome, firefox, kafka}, nil)
	require.Equal(t, 4, r.Passed, "%+v", r.Checks)

	// Stored twice instead of reinforced.
	twice := []memory.Belief{belief(1, memory.StatusActive, "User lives in Seattle"), belief(5, memory.StatusActive, "User is in Seattle"), chrome, firefox, kafka}
	r = score(twice, nil)
	require.Equal(t, eval.CheckReinforced, r.Checks[2].Kind)
	require.False(t, r.Checks[2].Pass)
	require.Equal(t, eval.Keep, r.Checks[2].Got, "the belief is kept all the same")
	// ... then merged by consolidation: one current belief, which absorbed the other.
	twice[1].Status = memory.StatusSuperseded
	r = score(twice, []memory.Event{event(memory.ActionSupersede, memory.ReasonDuplicate, 5, new(int64(1)))})
	require.True(t, r.Checks[2].Pass)

	// Firefox superseded Chrome: a wrong supersession.
	chrome.Status = memory.StatusSuperseded
	r = score([]memory.Belief{reinforced, chrome, firefox, kafka}, nil)
	_, total := eval.Aggregate([]eval.ScenarioResult{r})
	require.Equal(t, eval.Decisions{Made: 1, Precision: new(float64(0))}, total.Supersede)
	require.Equal(t, eval.Decisions{Expected: 3, Made: 2, Correct: 2, Precision: new(float64(1)), Recall: new(0.6667)}, total.Keep)
	require.Equal(t, eval.Decisions{Expected: 1, Made: 1, Correct: 1, Precision: new(float64(1)), Recall: new(float64(1))}, total.Retract)
	require.Equal(t, eval.Ratio{Passed: 2, Total: 3, Accuracy: new(0.6667)}, total.Current)
	require.Equal(t, eval.Ratio{}, total.Questions)

	// Nothing stored at all.
	r = score(nil, nil)
	require.Equal(t, eval.Missing, r.Checks[0].Got)
	require.Equal(t, 0, r.Passed)
}

func TestAggregateCostAndLatency(t *testing.T) {
	ep := func(ms int, calls, examples int, state memory.EpisodeState) eval.Episode {
		return eval.Episode{State: state, ChatCalls: calls, PromptTokens: 100, CompletionTokens: 10, Examples: examples,
			Duration: time.Duration(ms) * time.Millisecond}
	}
	rs := []eval.ScenarioResult{
		{Category: "hedged", Episodes: []eval.Episode{ep(100, 1, 0, "applied"), ep(300, 3, 2, "failed")},
			Consolidation: eval.Consolidation{ChatCalls: 1, PromptTokens: 40, CompletionTokens: 0}},
		{Category: "move", Episodes: []eval.Episode{ep(200, 1, 1, "applied"), ep(400, 1, 0, "applied")}, Errors: []string{"consolidate: boom"}},
		{Category: "custom"},
	}
	cats, total := eval.Aggregate(rs)
	require.Equal(t, []string{"move", "hedged", "custom"}, []string{cats[0].Category, cats[1].Category, cats[2].Category})
	require.Equal(t, 3, total.Scenarios)
	require.Equal(t, 4, total.Episodes)
	require.Equal(t, 1, total.Failed)
	require.Equal(t, 1, total.Errors)
	require.Equal(t, 1.75, total.Cost.CallsPerEpisode)                                            // (6 + 1) / 4
	require.Equal(t, 120.0, total.Cost.TokensPerEpisode)                                          // (440 + 40) / 4
	require.Equal(t, 0.75, total.Cost.ExamplesPerEpisode)                                         // 3 / 4
	require.Equal(t, eval.Latency{P50: new(float64(200)), P95: new(float64(400))}, total.Latency) // nearest rank
	require.Equal(t, eval.Latency{}, cats[2].Latency)
	require.Equal(t, 0.0, cats[2].Cost.CallsPerEpisode)
}

func TestScoreDependsOn(t *testing.T) {
	s := eval.Scenario{Name: "d", Category: "dependent_beliefs", Expect: eval.Expect{
		DependsOn: []eval.Dependency{{Belief: eval.Match{AnyOf: []string{"eastern"}}, On: eval.Match{AnyOf: []string{"new york"}}}},
	}}
	newYork := belief(1, memory.StatusSuperseded, "User lives in New York")
	miami := belief(2, memory.StatusActive, "User lives in Miami")
	eastern := func(status memory.Status, on ...int64) memory.Belief {
		b := belief(3, status, "User's time zone is US Eastern")
		b.DependsOn = on
		return b
	}
	forgotten := belief(4, memory.StatusForgotten, "User lives in New York")
	for _, tc := range []struct {
		name    string
		beliefs []memory.Belief
		pass    bool
		seen    []string
	}{
		{"kept, resting on the old basis", []memory.Belief{newYork, miami, eastern(memory.StatusActive, 1)}, true,
			[]string{"active: User's time zone is US Eastern <- superseded (temporal): User lives in New York"}},
		{"retired dependents count", []memory.Belief{newYork, miami, eastern(memory.StatusRetracted, 2, 1)}, true,
			[]string{"retracted: User's time zone is US Eastern <- active: User lives in Miami; superseded (temporal): User lives in New York"}},
		{"stored without its basis", []memory.Belief{newYork, miami, eastern(memory.StatusActive)}, false,
			[]string{"active: User's time zone is US Eastern <- nothing"}},
		{"resting on another belief", []memory.Belief{newYork, miami, eastern(memory.StatusActive, 2)}, false,
			[]string{"active: User's time zone is US Eastern <- active: User lives in Miami"}},
		{"resting on a forgotten belief", []memory.Belief{forgotten, miami, eastern(memory.StatusActive, 4)}, false,
			[]string{"active: User's time zone is US Eastern <- belief 4 (forgotten or erased)"}},
		{"no dependent at all", []memory.Belief{newYork, miami}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := eval.Score(s, eval.Observation{Beliefs: tc.beliefs,
				Events: []memory.Event{event(memory.ActionSupersede, memory.ReasonTemporal, 1, new(int64(2)))}})
			require.Len(t, r.Checks, 1)
			c := r.Checks[0]
			require.Equal(t, eval.CheckDependsOn, c.Kind)
			require.Equal(t, "[eastern] <- [new york]", c.Expect)
			require.Equal(t, tc.pass, c.Pass)
			require.Equal(t, tc.seen, c.Seen)
			require.Empty(t, c.Want, "a dependency is no keep, supersede or retract decision")
			_, total := eval.Aggregate([]eval.ScenarioResult{r})
			passed := map[bool]int{true: 1}[tc.pass]
			require.Equal(t, eval.Ratio{Passed: passed, Total: 1, Accuracy: new(float64(passed))}, total.Dependencies)
			require.Equal(t, eval.Ratio{}, total.Current, "scored apart from the current state")
			require.Equal(t, eval.Decisions{}, total.Keep)
		})
	}
}
