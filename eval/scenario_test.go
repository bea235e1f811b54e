package eval_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/memory"
)

// The shipped set parses, every scenario is well-formed (Load checks each one: known
// roles, dates in order, expectations that can match, questions whose wording recall
// reads as the view they are written for), and it covers every category.
func TestShippedScenarios(t *testing.T) {
	ss, err := eval.Shipped()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(ss), 80)

	perCategory := map[string]int{}
	for _, s := range ss {
		require.Contains(t, eval.Categories, s.Category, s.Name)
		perCategory[s.Category]++
		require.Equal(t, "eval:"+s.Name, s.Scope, s.Name)
		require.NotEmpty(t, s.Expect.Questions, "%s: no question", s.Name)
		for i := 1; i < len(s.Transcripts); i++ {
			require.True(t, s.Transcripts[i].OccurredAt.After(s.Transcripts[i-1].OccurredAt), s.Name)
		}
		e := s.Expect
		// What each category is about must be expected of it.
		switch s.Category {
		case "move", "job_change", "preference_change", "correction":
			require.NotEmpty(t, e.Current, s.Name)
			require.NotEmpty(t, e.Superseded, s.Name)
			for _, m := range e.Superseded {
				want := map[bool]string{true: "correction", false: "temporal"}[s.Category == "correction"]
				require.Equal(t, want, m.Reason, s.Name)
			}
		case "retraction":
			require.NotEmpty(t, e.Retracted, s.Name)
			require.NotEmpty(t, e.Absent, s.Name)
		case "revision_vs_contraction":
			require.NotEmpty(t, append(e.Superseded, e.Retracted...), s.Name)
		case "additive":
			require.GreaterOrEqual(t, len(e.Current), 2, s.Name)
			require.Empty(t, e.Superseded, s.Name)
		case "hedged", "third_party":
			require.NotEmpty(t, e.Current, s.Name)
			require.NotEmpty(t, e.Absent, s.Name)
			require.Empty(t, e.Superseded, s.Name)
		case "restatement":
			require.NotEmpty(t, e.Reinforced, s.Name)
		case "parallel_truths":
			require.NotEmpty(t, e.SideBySide, s.Name)
		case "events":
			// Something happened and stays true: an event beside another one, or the
			// right version of a corrected one.
			require.Positive(t, len(e.SideBySide)+len(e.Current)+len(e.Retracted), s.Name)
		case "dependent_beliefs":
			// A basis, a belief concluded from it in a later conversation, then a change
			// of the basis: the dependency is checked, and what became of the belief.
			require.GreaterOrEqual(t, len(s.Transcripts), 3, s.Name)
			require.NotEmpty(t, e.DependsOn, s.Name)
			require.Positive(t, len(e.Current)+len(e.Absent), s.Name)
		}
	}
	for _, c := range eval.Categories {
		require.GreaterOrEqual(t, perCategory[c], 5, "category %s", c)
	}
	require.GreaterOrEqual(t, perCategory["events"], 7)
	require.GreaterOrEqual(t, perCategory["dependent_beliefs"], 7)
	// Revision and contraction are both there.
	var revisions, contractions int
	for _, s := range ss {
		if s.Category == "revision_vs_contraction" {
			if len(s.Expect.Retracted) > 0 {
				contractions++
			} else {
				revisions++
			}
		}
	}
	require.GreaterOrEqual(t, revisions, 2)
	require.GreaterOrEqual(t, contractions, 2)
	// Events held side by side, and events corrected or retracted.
	var parallel, corrected int
	for _, s := range ss {
		if s.Category != "events" {
			continue
		}
		if len(s.Expect.SideBySide) > 0 {
			parallel++
		}
		for _, m := range append(s.Expect.Superseded, s.Expect.Retracted...) {
			if m.Reason == "correction" {
				corrected++
			}
		}
	}
	require.GreaterOrEqual(t, parallel, 3)
	require.GreaterOrEqual(t, corrected, 2)
}

func TestLoadReportsEveryProblem(t *testing.T) {
	in := strings.Join([]string{
		`{"name":"ok","category":"move","transcripts":[{"id":"a","occurred_at":"2025-01-01T00:00:00Z","messages":[{"role":"user","content":"I live in Rome."}]}],"expect":{"current":[{"any_of":["rome"]}]}}`,
		``,
		`{"name":"Bad Name","category":"move","transcripts":[],"expect":{}}`,
		`{"name":"order","category":"move","transcripts":[` +
			`{"id":"a","occurred_at":"2025-02-01T00:00:00Z","messages":[{"role":"user","content":"x"}]},` +
			`{"id":"a","occurred_at":"2025-01-01T00:00:00Z","messages":[{"role":"robot","content":"y"}]}],` +
			`"expect":{"current":[{"reason":"temporal"}],"superseded":[{"any_of":["x"],"reason":"because"}],"side_by_side":[[{"any_of":["a"]}]],` +
			`"questions":[{"q":"Where did the user live before?","any_of":["x"]}]}}`,
		`{"name":"ok","category":"move","surprise":1}`,
		`{"name":"ok","category":"move","transcripts":[{"id":"a","occurred_at":"2025-01-01T00:00:00Z","messages":[{"role":"user","content":"I live in Oslo."}]}],"expect":{"absent":[{"any_of":["?!"]}]}}`,
		`{"name":"dep","category":"dependent_beliefs","transcripts":[{"id":"a","occurred_at":"2025-01-01T00:00:00Z","messages":[{"role":"user","content":"I live in Oslo."}]}],` +
			`"expect":{"depends_on":[{"belief":{},"on":{"any_of":["oslo"],"reason":"temporal"}},{"belief":{"any_of":["cet"]}}]}}`,
	}, "\n")
	_, err := eval.Load("set.jsonl", strings.NewReader(in))
	require.Error(t, err)
	for _, want := range []string{
		`set.jsonl:3: Bad Name: name "Bad Name" is not a slug`,
		`set.jsonl:3: Bad Name: transcripts: none`,
		`set.jsonl:3: Bad Name: expect: no expected belief`,
		`set.jsonl:4: order: transcripts[1].id: "a" repeats`,
		`set.jsonl:4: order: transcripts[1].occurred_at: 2025-01-01T00:00:00Z is not after the previous transcript's`,
		`set.jsonl:4: order: transcripts[1]: messages[0].role`,
		`set.jsonl:4: order: expect.current[0]: needs all_of or any_of`,
		`set.jsonl:4: order: expect.current[0]: reason is only for superseded and retracted beliefs`,
		`set.jsonl:4: order: expect.superseded[0]: reason "because" is not temporal or correction`,
		`set.jsonl:4: order: expect.side_by_side[0]: a group needs at least two beliefs`,
		`set.jsonl:4: order: expect.questions[0]: historical is false but recall reads "Where did the user live before?" as about the past`,
		`set.jsonl:5: json: unknown field "surprise"`,
		`set.jsonl:6: ok: expect.absent[0]: phrase "?!" has no letter or digit`,
		`set.jsonl:6: ok: name already used on line 1`,
		`set.jsonl:6: ok: scope "eval:ok" already used on line 1`,
		`set.jsonl:7: dep: expect.depends_on[0].belief: needs all_of or any_of`,
		`set.jsonl:7: dep: expect.depends_on[0].on: reason is only for superseded and retracted beliefs`,
		`set.jsonl:7: dep: expect.depends_on[1].on: needs all_of or any_of`,
	} {
		require.Contains(t, err.Error(), want)
	}
	require.NotContains(t, err.Error(), "dep: expect: no expected belief", "depends_on is an expectation")
}

func TestFilter(t *testing.T) {
	ss := []eval.Scenario{{Name: "a", Category: "move"}, {Name: "b", Category: "move"}, {Name: "c", Category: "hedged"}}
	got, err := eval.Filter(ss, nil)
	require.NoError(t, err)
	require.Len(t, got, 3)
	got, err = eval.Filter(ss, []string{"hedged", "b"})
	require.NoError(t, err)
	require.Equal(t, []string{"b", "c"}, names(got))
	_, err = eval.Filter(ss, []string{"move", "nope"})
	require.EqualError(t, err, "--only nope: no scenario has that category or name")
}

func names(ss []eval.Scenario) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func TestMatch(t *testing.T) {
	require.Equal(t, "user s city new york 2", eval.Normalize("  User's city: New-York (2)! "))
	m := eval.Match{AnyOf: []string{"New York", "brooklyn"}, NoneOf: []string{"moved"}}
	require.True(t, m.Statement("User lives in new-york city", "location"))
	require.True(t, m.Statement("User lives in Brooklyn.", ""))
	require.False(t, m.Statement("User moved from New York to Miami", "location"))
	require.False(t, m.Statement("User lives in Newark", "location"))
	// Whole words only.
	java := eval.Match{AnyOf: []string{"java"}}
	require.False(t, java.Statement("User writes JavaScript", ""))
	require.True(t, java.Statement("User writes Java and JavaScript", ""))
	// all_of, and the attribute as whole words.
	sister := eval.Match{AllOf: []string{"sister"}, AnyOf: []string{"denver"}, Attribute: "location"}
	require.True(t, sister.Statement("User's sister lives in Denver", "sister_location"))
	require.False(t, sister.Statement("User's sister lives in Denver", "relocation"))
	require.False(t, sister.Statement("User lives in Denver", "location"))
	require.Equal(t, "sister [denver] @location", sister.String())
	require.Equal(t, "[New York|brooklyn] -[moved]", m.String())
}

// The shipped questions are asked in the view their wording selects.
func TestShippedQuestionsReadAsWritten(t *testing.T) {
	ss, err := eval.Shipped()
	require.NoError(t, err)
	var historical int
	for _, s := range ss {
		for _, q := range s.Expect.Questions {
			require.Equal(t, q.Historical, memory.IsHistorical(q.Q), "%s: %q", s.Name, q.Q)
			if q.Historical {
				historical++
			}
		}
	}
	require.GreaterOrEqual(t, historical, 20)
	require.True(t, slices.ContainsFunc(ss, func(s eval.Scenario) bool { return len(s.Transcripts) >= 3 }))
}
