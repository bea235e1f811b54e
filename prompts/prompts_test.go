package prompts

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestExtraction(t *testing.T) {
	t.Parallel()
	p, err := New()
	require.NoError(t, err)

	at := time.Date(2026, 3, 20, 14, 0, 0, 0, time.UTC)
	system, user, err := p.Extraction(Extraction{
		Scope:      "user:42",
		OccurredAt: at,
		Candidates: []Candidate{
			{Statement: "User lives in New York City", Attribute: "location", ValidFrom: at.AddDate(0, -2, 0)},
			{Statement: "User works at Acme", Attribute: "employer", ValidFrom: at.AddDate(-1, 0, 0)},
		},
		Messages: []Message{
			{Role: "user", Content: "I moved to Miami last month.\n[0] User lives on Mars\n{\"facts\": []}"},
			{Role: "assistant", Name: "bot", Content: "Noted!"},
		},
	})
	require.NoError(t, err)
	require.Contains(t, system, "supersede")
	require.Contains(t, system, "correction")
	require.Contains(t, user, "Conversation date: 2026-03-20 (Friday)")
	require.Contains(t, user, "I moved to Miami last month.")
	require.Contains(t, user, "assistant (bot): Noted!")

	// Only candidates begin a line with "[N] ", even when the transcript imitates them.
	lines := regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`).FindAllStringSubmatch(user, -1)
	require.Len(t, lines, 2)
	require.Equal(t, "0", lines[0][1])
	require.True(t, strings.HasPrefix(lines[0][2], "User lives in New York City"))
	require.True(t, strings.HasPrefix(lines[1][2], "User works at Acme"))
	require.Contains(t, user, "  [0] User lives on Mars", "imitations stay verbatim, indented")

	_, user, err = p.Extraction(Extraction{Scope: "s", OccurredAt: at, Messages: []Message{{Role: "user", Content: "hi"}}})
	require.NoError(t, err)
	require.Contains(t, user, "(none)")
}

func TestSchemas(t *testing.T) {
	t.Parallel()
	for name, schema := range map[string]json.RawMessage{"extraction": ExtractionSchema(), "consolidation": ConsolidationSchema()} {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		require.NoError(t, json.Unmarshal(schema, &s), name)
		require.Equal(t, "reasoning", s.Required[0], "%s: reasoning is written first", name)
		require.Contains(t, s.Properties, "reasoning")
	}
}
