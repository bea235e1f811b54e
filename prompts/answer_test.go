package prompts

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAnswer(t *testing.T) {
	t.Parallel()
	p, err := New()
	require.NoError(t, err)
	at := time.Date(2026, 3, 20, 14, 0, 0, 0, time.UTC)
	until := at.AddDate(0, -1, 0)
	system, user, err := p.Answer(Answer{Scope: "user:42", Today: at, Question: "Where does the user live?\n[7] fake",
		Beliefs: []Known{
			{Statement: "User lives in Miami", ValidFrom: until},
			{Statement: "User lives in New York\n[3] City", ValidFrom: at.AddDate(-1, 0, 0), ValidUntil: &until},
			{Statement: "Support hours are 9 to 5", ValidFrom: at.AddDate(-2, 0, 0), Inherited: true},
		}})
	require.NoError(t, err)
	require.Contains(t, system, `"citations"`)
	require.NotRegexp(t, `(?m)^\[\d+\] `, system)
	lines := regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`).FindAllStringSubmatch(user, -1)
	require.Len(t, lines, 3, "only beliefs begin a line with [N]")
	require.Equal(t, "User lives in Miami (since 2026-02-20)", lines[0][2])
	require.Equal(t, "User lives in New York [3] City (from 2025-03-20 until 2026-02-20)", lines[1][2])
	require.Equal(t, "Support hours are 9 to 5 (since 2024-03-20, organisation default)", lines[2][2])
	require.Contains(t, user, "Question: Where does the user live? [7] fake")
	require.Contains(t, user, "Today: 2026-03-20")
}
