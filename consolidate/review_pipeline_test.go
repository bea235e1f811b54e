package consolidate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/prompts"
)

const (
	nyc      = "User lives in New York"
	timeZone = "User's time zone is US Eastern"
	miami    = "User lives in Miami"
)

// TestBasisChangeThroughThePipeline: New York, then a time zone inferred from it, then a
// move to Miami, through River and the wire-level fake. The move flags the time zone;
// the scope's consolidation pass asks the model about it, once, showing the old basis and
// what replaced it, and applies the answer.
func TestBasisChangeThroughThePipeline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer     string
		wantStatus memory.Status
		wantActive []string
	}{
		{`{"index": 0, "action": "keep", "statement": "", "reason": "temporal"}`, memory.StatusActive, []string{miami, timeZone}},
		{`{"index": 0, "action": "retract", "statement": "", "reason": "temporal"}`, memory.StatusRetracted, []string{miami}},
		{`{"index": 0, "action": "supersede", "statement": "User's time zone is US Eastern (Miami)", "reason": "temporal"}`,
			memory.StatusSuperseded, []string{miami, "User's time zone is US Eastern (Miami)"}},
	} {
		var action struct {
			Action string `json:"action"`
		}
		require.NoError(t, json.Unmarshal([]byte(tc.answer), &action))
		t.Run(action.Action, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p := pipelinetest.New(t, &pipelinetest.Options{Consolidate: true})
			p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
				switch req.SchemaName {
				case prompts.ReviewSchemaName:
					return llmtest.Reply{Content: `{"reasoning": "scripted", "reviews": [` + tc.answer + `]}`}
				case prompts.ConsolidationSchemaName:
					return llmtest.Reply{Content: `{"reasoning": "distinct", "resolutions": []}`}
				}
				switch {
				case strings.Contains(req.Prompt, "I live in New York"):
					return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: nyc, Attribute: "location"})}
				case strings.Contains(req.Prompt, "9am my time"):
					return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: timeZone, Attribute: "time_zone",
						Origin: "inferred", DependsOn: []int{0}})}
				case strings.Contains(req.Prompt, "moved to Miami"):
					return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: miami, Attribute: "location",
						Resolves: &pipelinetest.Resolves{Index: indexOf(req.Prompt, nyc), Action: "supersede", Reason: "temporal"}})}
				}
				return llmtest.Reply{Content: pipelinetest.Answer()}
			})
			p.Enqueue(t,
				pipelinetest.T("u", "c1", "2026-01-10T10:00:00Z", "I live in New York."),
				pipelinetest.T("u", "c2", "2026-01-20T10:00:00Z", "Book the call for 9am my time."),
				pipelinetest.T("u", "c3", "2026-03-01T10:00:00Z", "I moved to Miami last week."))
			p.Drain(t)

			all, err := p.Store.All(ctx, "u")
			require.NoError(t, err)
			tz := byStatement(t, all, timeZone)
			require.Equal(t, []int64{byStatement(t, all, nyc).ID}, tz.DependsOn)
			require.True(t, tz.NeedsReview, "the move flags what was concluded from New York")
			items, err := p.Store.Conflicts(ctx, "u", false)
			require.NoError(t, err)
			require.Len(t, items, 1)
			require.Equal(t, memory.ConflictBasisChanged, items[0].Kind)

			p.Consolidate(t, "u")
			p.Drain(t)
			reviews := reviewCalls(p)
			require.Len(t, reviews, 1, "one review call for the scope's flagged beliefs")
			require.Contains(t, reviews[0].Prompt, "[0] "+timeZone)
			require.Contains(t, reviews[0].Prompt, `"`+nyc+`" — superseded, now: "`+miami+`"`)

			got, err := p.Store.Get(ctx, tz.ID)
			require.NoError(t, err)
			require.Equal(t, tc.wantStatus, got.Status)
			require.False(t, got.NeedsReview)
			current, err := p.Store.Current(ctx, "u")
			require.NoError(t, err)
			require.ElementsMatch(t, tc.wantActive, statements(current))
			if tc.wantStatus == memory.StatusSuperseded {
				next := byStatement(t, current, tc.wantActive[1])
				require.Equal(t, []int64{byStatement(t, current, miami).ID}, next.DependsOn, "the new conclusion rests on the new basis")
			}
			items, err = p.Store.Conflicts(ctx, "u", false)
			require.NoError(t, err)
			require.Empty(t, items, "the item is closed")

			// Nothing is flagged any more: a second pass asks nothing.
			p.Consolidate(t, "u")
			p.Drain(t)
			require.Len(t, reviewCalls(p), 1)
		})
	}
}

func reviewCalls(p *pipelinetest.Pipeline) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range p.LLM.Chats() {
		if r.SchemaName == prompts.ReviewSchemaName {
			out = append(out, r)
		}
	}
	return out
}

// indexOf is the candidate index of statement in an extraction prompt.
func indexOf(prompt, statement string) int {
	for line := range strings.SplitSeq(prompt, "\n") {
		var i int
		if n, _ := fmt.Sscanf(line, "[%d]", &i); n == 1 && strings.Contains(line, "] "+statement+" (") {
			return i
		}
	}
	return -1
}

func statements(bs []memory.Belief) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Statement
	}
	return out
}

func byStatement(t *testing.T, bs []memory.Belief, statement string) memory.Belief {
	t.Helper()
	for _, b := range bs {
		if b.Statement == statement {
			return b
		}
	}
	require.FailNowf(t, "belief not found", "%q", statement)
	return memory.Belief{}
}
