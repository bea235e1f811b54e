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

// Mentions reads only columns that can hold text: digits that a timestamp, a number or a
// vector happens to contain are no mention (river_migration.created_at once held 4417), or an erasure test would fail by chance.
func TestMentionsReadsOnlyText(t *testing.T) {
	t.Parallel()
	s := dbtest.New(t)
	_, err := s.Pool.Exec(context.Background(), `INSERT INTO episode (scope, messages, content_hash, occurred_at, received_at)
		VALUES ('user:1', '[{"role": "user", "content": "hello"}]', 'h', '2026-03-20 12:00:00.4417+00', '2026-03-20 12:00:00.4417+00')`)
	require.NoError(t, err)
	require.Empty(t, s.Mentions(t, "4417"), "a timestamp is not text")
	require.Equal(t, map[string]int{"episode": 1}, s.Mentions(t, "HELLO"))
	require.Equal(t, map[string]int{"episode": 1}, s.Mentions(t, "user:1"))
}
