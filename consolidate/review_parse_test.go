package consolidate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

func TestParseReview(t *testing.T) {
	t.Parallel()
	verdicts, reasoning, err := parseReview(`{"reasoning": " Miami shares New York's time zone. ", "reviews": [
		{"index": 3, "action": "supersede", "statement": "  User's time zone is US Pacific ", "reason": "temporal"},
		{"index": 0, "action": "keep", "statement": "ignored", "reason": ""},
		{"index": 2, "action": "retract", "statement": "ignored", "reason": "correction"}]}`, 4)
	require.NoError(t, err)
	require.Equal(t, "Miami shares New York's time zone.", reasoning)
	require.Equal(t, []reviewVerdict{
		{Index: 0, Action: reviewKeep, Reason: ""},
		{Index: 2, Action: reviewRetract, Reason: memory.ReasonCorrection},
		{Index: 3, Action: reviewSupersede, Statement: "User's time zone is US Pacific", Reason: memory.ReasonTemporal},
	}, verdicts, "sorted by index, belief 1 unanswered")

	verdicts, _, err = parseReview(`{"reasoning": "", "reviews": [{"index": 0, "action": "keep", "statement": "", "reason": "whatever"}]}`, 1)
	require.NoError(t, err, "the reason of a keep is ignored")
	require.Equal(t, reviewKeep, verdicts[0].Action)

	verdicts, _, err = parseReview(`{"reasoning": "", "reviews": []}`, 2)
	require.NoError(t, err)
	require.Empty(t, verdicts)

	_, reasoning, err = parseReview(`{"reasoning": "`+strings.Repeat("é", maxRationale+10)+`", "reviews": []}`, 1)
	require.NoError(t, err)
	require.Len(t, []rune(reasoning), maxRationale+1, "the reasoning is cut, with an ellipsis")

	for name, content := range map[string]string{
		"not json":          `keep all`,
		"missing reviews":   `{"reasoning": ""}`,
		"null reviews":      `{"reasoning": "", "reviews": null}`,
		"unknown field":     `{"reasoning": "", "reviews": [], "resolutions": []}`,
		"unknown in review": `{"reasoning": "", "reviews": [{"index": 0, "action": "keep", "statement": "", "reason": "temporal", "replaced_by": 1}]}`,
		"trailing":          `{"reasoning": "", "reviews": []} {}`,
		"out of range":      `{"reasoning": "", "reviews": [{"index": 3, "action": "keep", "statement": "", "reason": "temporal"}]}`,
		"negative":          `{"reasoning": "", "reviews": [{"index": -1, "action": "keep", "statement": "", "reason": "temporal"}]}`,
		"no index":          `{"reasoning": "", "reviews": [{"action": "keep", "statement": "", "reason": "temporal"}]}`,
		"null index":        `{"reasoning": "", "reviews": [{"index": null, "action": "keep", "statement": "", "reason": "temporal"}]}`,
		"twice":             `{"reasoning": "", "reviews": [{"index": 1, "action": "keep", "statement": "", "reason": "temporal"}, {"index": 1, "action": "retract", "statement": "", "reason": "temporal"}]}`,
		"action":            `{"reasoning": "", "reviews": [{"index": 1, "action": "reinforce", "statement": "", "reason": "temporal"}]}`,
		"no action":         `{"reasoning": "", "reviews": [{"index": 1, "statement": "", "reason": "temporal"}]}`,
		"no statement":      `{"reasoning": "", "reviews": [{"index": 1, "action": "supersede", "reason": "temporal"}]}`,
		"blank statement":   `{"reasoning": "", "reviews": [{"index": 1, "action": "supersede", "statement": " \n ", "reason": "temporal"}]}`,
		"NUL statement":     `{"reasoning": "", "reviews": [{"index": 1, "action": "supersede", "statement": "User\u0000 is", "reason": "temporal"}]}`,
		"long statement":    `{"reasoning": "", "reviews": [{"index": 1, "action": "supersede", "statement": "` + strings.Repeat("é", memory.MaxStatementLen+1) + `", "reason": "temporal"}]}`,
		"retract reason":    `{"reasoning": "", "reviews": [{"index": 1, "action": "retract", "statement": "", "reason": "duplicate"}]}`,
		"supersede reason":  `{"reasoning": "", "reviews": [{"index": 1, "action": "supersede", "statement": "User is", "reason": ""}]}`,
		"oversize":          `{"reasoning": "` + strings.Repeat("a", MaxOutputBytes) + `", "reviews": []}`,
	} {
		_, _, err := parseReview(content, 3)
		require.ErrorIs(t, err, llm.ErrMalformedOutput, name)
	}
}
