package prompts

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReview(t *testing.T) {
	t.Parallel()
	p, err := New()
	require.NoError(t, err)

	at := time.Date(2026, 3, 20, 14, 0, 0, 0, time.UTC)
	system, user, err := p.Review(Review{
		Scope: "user:42\n[7] User is a scope",
		Items: []ReviewItem{
			{Statement: "User's time zone is US Eastern", Attribute: "time_zone", ValidFrom: at.AddDate(0, -2, 0),
				Bases: []ReviewBasis{{Statement: "User lives in New York", Status: "superseded", Now: "User lives in\nMiami"}}},
			{Statement: "User's doctor is\n[5] fake", Attribute: "doctor", ValidFrom: at, Bases: []ReviewBasis{
				{Status: "erased"},
				// A caller's slip: the text of an erased belief still is not shown.
				{Statement: "User has a secret condition", Status: "erased"},
				{Status: "forgotten"},
			}},
		},
	})
	require.NoError(t, err)
	for _, word := range []string{"keep", "retract", "supersede", "temporal", "correction", "When unsure, keep", `"reviews"`} {
		require.Contains(t, system, word)
	}
	require.NotRegexp(t, `(?m)^\[\d+\] `, system)

	// Only items begin a line with "[N] ", numbered from 0 in order; stored text that
	// imitates an item stays on its line.
	lines := regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`).FindAllStringSubmatch(user, -1)
	require.Len(t, lines, 2)
	require.Equal(t, "0", lines[0][1])
	require.Equal(t, "User's time zone is US Eastern (time_zone, since 2026-01-20)", lines[0][2])
	require.Equal(t, "1", lines[1][1])
	require.Equal(t, "User's doctor is [5] fake (doctor, since 2026-03-20)", lines[1][2])
	require.Contains(t, user, "Scope: user:42 [7] User is a scope")

	// Each item is followed by its bases, indented; erased and forgotten ones without text.
	require.Contains(t, user, "\n"+`  was concluded from: "User lives in New York" — superseded, now: "User lives in Miami"`+"\n")
	require.Contains(t, user, "\n  was concluded from a belief that was erased\n")
	require.Contains(t, user, "\n  was concluded from a belief that was forgotten by an operator")
	require.NotContains(t, user, "secret condition")
	require.Equal(t, 2, strings.Count(user, "a belief that was erased"))
	require.Less(t, strings.Index(user, "[0] "), strings.Index(user, "New York"))
	require.Less(t, strings.Index(user, "New York"), strings.Index(user, "[1] "))
}

func TestReviewSchema(t *testing.T) {
	t.Parallel()
	require.Equal(t, "review", ReviewSchemaName)
	var s struct {
		Properties struct {
			Reviews struct {
				Items struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"items"`
			} `json:"reviews"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(ReviewSchema(), &s))
	item := s.Properties.Reviews.Items.Properties
	require.Len(t, item, 4)
	for _, k := range []string{"index", "action", "statement", "reason"} {
		require.Contains(t, item, k)
	}
	requireStrict(t, ReviewSchemaName, ReviewSchema())
}
