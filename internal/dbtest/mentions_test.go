package dbtest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// Mentions finds text with LIKE's special characters, and text that jsonb's text form
// escapes, so that an erasure test cannot pass on a leak it cannot see.
func TestMentionsFindsEscapedText(t *testing.T) {
	t.Parallel()
	s := dbtest.New(t)
	_, err := s.Pool.Exec(context.Background(), `INSERT INTO episode (scope, messages, content_hash, occurred_at)
		VALUES ('user:1', $1, 'h', now())`, `[{"role": "user", "content": "say \"hi\" from C:\\temp at 50% <now>"}]`)
	require.NoError(t, err)
	for _, text := range []string{`say "hi"`, `C:\temp`, `50% <NOW>`} {
		require.Equal(t, map[string]int{"episode": 1}, s.Mentions(t, text), text)
	}
	require.Empty(t, s.Mentions(t, `50%_<`), "% and _ are not wildcards")
}
