package transcript

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckScopeAndText(t *testing.T) {
	t.Parallel()
	for scope, want := range map[string]string{
		"user:42": "", "acme/team:x/user:1": "", "": "is empty", " user": "leading or trailing", "a\x00b": "control character U+0000", //nolint:gocritic // mapKey: " user"'s space is the case
		"\xff": "not valid UTF-8", strings.Repeat("s", 201): "201 characters", "user:\u202e24": "bidirectional control U+202E",
	} {
		err := CheckScope("scope", scope)
		if want == "" {
			require.NoError(t, err, scope)
			continue
		}
		require.ErrorIs(t, err, ErrInput, scope)
		require.ErrorContains(t, err, "scope ")
		require.ErrorContains(t, err, want, scope)
	}
	for text, want := range map[string]string{
		"Where does she live?\nAnd before?\t": "", "a\x00b": "NUL", "\xffx": "UTF-8", "a\x07b": "U+0007",
		"a \u202eevil": "bidirectional control U+202E", "\u2066x\u2069": "bidirectional control U+2066",
		"a\u2028b": "line separator U+2028", "a\u2029b": "paragraph separator U+2029",
		"\u05e9\u05dc\u05d5\u05dd\u200f!":  "", // a mark (RLM) in right-to-left text stays allowed
		strings.Repeat("q", MaxQueryLen+1): "2001 characters",
	} {
		err := CheckText("query", text, MaxQueryLen)
		if want == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorIs(t, err, ErrInput)
		require.ErrorContains(t, err, want)
	}
}

// A surface shows the field and its problem from the typed error, not from its text.
func TestInputMessage(t *testing.T) {
	t.Parallel()
	msg, ok := InputMessage(CheckScope("--scope", "a\x07b"))
	require.True(t, ok)
	require.Equal(t, "--scope contains the control character U+0007", msg)
	_, ok = InputMessage(nil)
	require.False(t, ok)
}
