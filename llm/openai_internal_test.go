package llm

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWithZeroTemperature(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"model":"m","messages":[]}`, `{"temperature":0,"model":"m","messages":[]}`},
		{`{"model":"m","temperature":0.7}`, `{"model":"m","temperature":0.7}`}, // caller's value wins
		{`{}`, `{"temperature":0}`},
		{"\n {\"a\":1}", `{"temperature":0,"a":1}`},
		{`not json`, `not json`},
		{`[1,2]`, `[1,2]`},
		{`null`, `null`},
	} {
		got := string(withZeroTemperature([]byte(tc.in)))
		require.Equal(t, tc.want, got, "input %q", tc.in)
		if json.Valid([]byte(tc.in)) {
			require.True(t, json.Valid([]byte(got)), "output %q", got)
		}
	}
}

func TestSendsTemperature(t *testing.T) {
	t.Parallel()
	require.True(t, sendsTemperature("qwen2.5:7b"))
	require.True(t, sendsTemperature("gpt-4o-mini"))
	require.False(t, sendsTemperature("o3-mini"))
	require.False(t, sendsTemperature("gpt-5"))
}
