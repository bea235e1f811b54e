package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// A purge says which transcripts it redacted rather than erased, apart from the rows
// it removed, and `episodes` marks them.
func TestPurgeSaysWhatItRedacted(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	var episode int64
	err := c.schema.Pool.QueryRow(ctx, `INSERT INTO episode (scope, messages, content_hash, occurred_at, state)
		VALUES ('u', '[{"role": "user", "content": "My PIN is 5521. I have a cat named Tom."}]', 'h', '2026-01-15', 'applied')
		RETURNING id`).Scan(&episode)
	require.NoError(t, err)
	fact := func(statement, attribute, quote string) memory.Fact {
		return memory.Fact{Statement: statement, Subject: "user", Attribute: attribute, Kind: memory.KindAttribute,
			Confidence: 0.9, Origin: memory.OriginUserStated, Quote: quote}
	}
	res, err := c.store.Apply(ctx, &memory.Batch{Scope: "u", Origin: memory.RevisionExtraction, EpisodeID: &episode,
		At: date("2026-01-15"), Facts: []memory.Fact{fact("User's PIN is 5521", "pin", "My PIN is 5521."),
			fact("User has a cat named Tom", "pet", "I have a cat named Tom.")}})
	require.NoError(t, err)

	out := c.mustRun("forget", "--id", strconv.FormatInt(res.Facts[0].BeliefID, 10), "--purge")
	require.Contains(t, out, "1 transcript redacted, kept for the beliefs that still come from it")
	require.Regexp(t, `(?m)^belief\s+1$`, out)
	require.NotContains(t, out, "episode_redacted", "a redacted transcript is no row removed")
	require.Contains(t, c.mustRun("episodes", "--scope", "u"), "applied (redacted)")
	require.NotContains(t, c.mustRun("list", "--scope", "u"), "5521")
}
