package extract

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

var occurred = time.Date(2026, 3, 20, 14, 0, 0, 0, time.UTC)

func TestParse(t *testing.T) {
	t.Parallel()
	got, reasoning, err := Parse(`{"reasoning": "moved", "facts": [
		{"statement": " User lives in Miami ", "subject": "user", "attribute": "location", "kind": "attribute",
		 "valid_from": "2026-02-15", "confidence": 0.9, "origin": "user_stated", "quote": "I moved to Miami",
		 "resolves": {"session_index": 0, "action": "supersede", "reason": "temporal"}},
		{"statement": "", "subject": "user", "attribute": "plan", "kind": "plan", "valid_from": null, "confidence": 0.8,
		 "origin": "user_stated", "quote": "not doing Kafka", "resolves": {"session_index": 1, "action": "retract", "reason": "temporal"}}
	]}`, 2, occurred)
	require.NoError(t, err)
	require.Equal(t, "moved", reasoning)
	require.Len(t, got, 2)
	require.Equal(t, "User lives in Miami", got[0].Statement)
	require.Equal(t, time.Date(2026, 2, 15, 0, 0, 0, 0, time.UTC), *got[0].ValidFrom)
	require.Equal(t, &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}, got[0].Resolves)
	require.Empty(t, got[1].Statement, "a pure retraction")
	require.Nil(t, got[1].ValidFrom)

	got, _, err = Parse(facts(0), 0, occurred)
	require.NoError(t, err)
	require.Empty(t, got)

	// depends_on is kept as given, and its absence (or null) means none.
	for give, want := range map[string][]int{`[1, 0]`: {1, 0}, `[]`: {}, `null`: nil} {
		got, _, err = Parse(strings.Replace(facts(1), `"resolves":null`, `"resolves":null,"depends_on":`+give, 1), 2, occurred)
		require.NoError(t, err, give)
		require.Equal(t, want, got[0].DependsOn, give)
	}
	got, _, err = Parse(facts(1), 2, occurred)
	require.NoError(t, err)
	require.Nil(t, got[0].DependsOn)
}

func catFact() map[string]any {
	return map[string]any{"statement": "User has a cat", "subject": "user", "attribute": "pet", "kind": "attribute",
		"valid_from": nil, "confidence": 0.9, "origin": "user_stated", "quote": "cat", "resolves": nil}
}

func answer(facts ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"reasoning": "", "facts": facts})
	return string(b)
}

// fact is an answer of one valid fact changed by mutate.
func fact(mutate func(m map[string]any)) string {
	m := catFact()
	mutate(m)
	return answer(m)
}

// facts is an answer of n valid facts.
func facts(n int) string {
	fs := make([]map[string]any, n)
	for i := range fs {
		fs[i] = catFact()
	}
	return answer(fs...)
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	resolves := func(i any, action, reason string) func(map[string]any) {
		return func(m map[string]any) {
			m["resolves"] = map[string]any{"session_index": i, "action": action, "reason": reason}
		}
	}
	cases := map[string]struct{ content, want string }{
		"not JSON":                {"Sure! The user moved.", "not the extraction schema"},
		"array":                   {`[]`, "not the extraction schema"},
		"trailing text":           {`{"reasoning": "", "facts": []} and more`, "text after"},
		"unknown field":           {`{"reasoning": "", "facts": [], "mood": "happy"}`, `unknown object member name "mood"`},
		"case-variant name":       {`{"Reasoning": "", "facts": []}`, `unknown object member name "Reasoning"`},
		"name twice":              {`{"reasoning": "", "facts": [], "facts": []}`, `duplicate object member name "facts"`},
		"null facts":              {`{"reasoning": "", "facts": null}`, "facts is missing"},
		"authoritative":           {fact(func(m map[string]any) { m["origin"] = "authoritative" }), `origin "authoritative"`},
		"no confidence":           {fact(func(m map[string]any) { delete(m, "confidence") }), "confidence is missing"},
		"confidence 2":            {fact(func(m map[string]any) { m["confidence"] = 2 }), "confidence 2"},
		"empty statement":         {fact(func(m map[string]any) { m["statement"] = " " }), "statement is empty"},
		"NUL in quote":            {fact(func(m map[string]any) { m["quote"] = "a\x00b" }), "quote contains a NUL"},
		"no attribute":            {fact(func(m map[string]any) { m["attribute"] = "" }), "attribute is empty"},
		"bad kind":                {fact(func(m map[string]any) { m["kind"] = "gossip" }), `kind "gossip"`},
		"bad date":                {fact(func(m map[string]any) { m["valid_from"] = "last Tuesday" }), "not an ISO date"},
		"year 0":                  {fact(func(m map[string]any) { m["valid_from"] = "0000-01-01" }), "implausible"},
		"year 9999":               {fact(func(m map[string]any) { m["valid_from"] = "9999-12-31" }), "implausible"},
		"negative index":          {fact(resolves(-1, "supersede", "temporal")), "session_index -1"},
		"index out of range":      {fact(resolves(2, "supersede", "temporal")), "session_index 2"},
		"index missing":           {fact(resolves(nil, "supersede", "temporal")), "session_index is missing"},
		"float index":             {fact(resolves(0.5, "supersede", "temporal")), "not the extraction schema"},
		"unknown action":          {fact(resolves(0, "delete", "temporal")), `action "delete"`},
		"reinforce reason":        {fact(resolves(0, "reinforce", "temporal")), `reason "temporal" is not restated`},
		"supersede reason":        {fact(resolves(0, "supersede", "restated")), `reason "restated"`},
		"huge":                    {`{"reasoning": "` + strings.Repeat("x", MaxOutputBytes) + `", "facts": []}`, "the limit is"},
		"too many facts":          {facts(MaxOutputFacts + 1), "facts; the limit"},
		"depends_on out of range": {fact(func(m map[string]any) { m["depends_on"] = []int{0, 2} }), "depends_on 2"},
		"negative depends_on":     {fact(func(m map[string]any) { m["depends_on"] = []int{-1} }), "depends_on -1"},
		"depends_on not a list":   {fact(func(m map[string]any) { m["depends_on"] = 1 }), "not the extraction schema"},
	}
	for name, tc := range cases {
		_, _, err := Parse(tc.content, 2, occurred)
		require.Error(t, err, name)
		require.ErrorIs(t, err, llm.ErrMalformedOutput, "%s: %v", name, err)
		require.Contains(t, err.Error(), tc.want, name)
	}
}

// FuzzParse: no answer makes Parse panic, and what it accepts is in range.
func FuzzParse(f *testing.F) {
	f.Add(fact(func(map[string]any) {}), 1)
	f.Add(`{"reasoning": "", "facts": []}`, 0)
	f.Add(`{"reasoning":"x","facts":[{"statement":"","subject":"user","attribute":"a","kind":"other","valid_from":"2026-01-01T00:00:00","confidence":1,"origin":"inferred","quote":"","resolves":{"session_index":0,"action":"retract","reason":"correction"}}]}`, 1)
	f.Fuzz(func(t *testing.T, content string, candidates int) {
		candidates = max(0, min(candidates, 64))
		got, _, err := Parse(content, candidates, occurred)
		if err != nil {
			require.ErrorIs(t, err, llm.ErrMalformedOutput)
			return
		}
		for _, f := range got {
			if f.Resolves != nil {
				require.Less(t, f.Resolves.Index, candidates)
				require.GreaterOrEqual(t, f.Resolves.Index, 0)
			}
			for _, i := range f.DependsOn {
				require.True(t, i >= 0 && i < candidates, "depends_on %d of %d", i, candidates)
			}
			require.False(t, f.Confidence < 0 || f.Confidence > 1)
		}
	})
}

// The subject's other names and kind are optional: absent or null say nothing, empty
// names and the subject again are dropped, and names no entity could have, too many of
// them or an unknown kind make the answer malformed.
func TestParseSubjectNames(t *testing.T) {
	t.Parallel()
	parse := func(mutate func(map[string]any)) ([]memory.Fact, error) {
		f := catFact()
		f["subject"] = "user's sister"
		mutate(f)
		got, _, err := Parse(answer(f), 0, occurred)
		return got, err
	}
	got, err := parse(func(m map[string]any) {
		m["subject_aliases"], m["subject_kind"] = []string{"Sarah", " ", "Sister", "sis"}, "person"
	})
	require.NoError(t, err)
	require.Equal(t, []string{"Sarah", "sis"}, got[0].SubjectAliases)
	require.EqualValues(t, "person", got[0].SubjectKind)
	got, err = parse(func(m map[string]any) { m["subject_aliases"], m["subject_kind"] = nil, nil })
	require.NoError(t, err)
	require.Empty(t, got[0].SubjectAliases)
	require.Empty(t, got[0].SubjectKind)

	for name, mutate := range map[string]func(map[string]any){
		"too many":     func(m map[string]any) { m["subject_aliases"] = strings.Split("a b c d e f g h i", " ") },
		"too long":     func(m map[string]any) { m["subject_aliases"] = []string{strings.Repeat("x", 201)} },
		"control":      func(m map[string]any) { m["subject_aliases"] = []string{"Sa\x07rah"} },
		"unknown kind": func(m map[string]any) { m["subject_kind"] = "robot" },
	} {
		_, err := parse(mutate)
		require.ErrorIs(t, err, llm.ErrMalformedOutput, name)
	}
}
