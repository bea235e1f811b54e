// The shipped example transcripts must pass the same checks as `enqueue` applies.
package examples_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/transcript"
)

// stories are the examples the README and DESIGN.md refer to.
var stories = []string{"move.jsonl", "job-change.jsonl", "retraction.jsonl", "parallel-truths.jsonl", "correction.jsonl"}

func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob("*.jsonl")
	require.NoError(t, err)
	sort.Strings(files)
	want := append([]string(nil), stories...)
	sort.Strings(want)
	require.Subset(t, files, want, "every story has its file")

	scopes := map[string]string{} // scope -> file
	ids := map[string]string{}    // id -> file
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(name)
			require.NoError(t, err)
			defer f.Close()
			ts, err := transcript.Parse(name, f, time.Now(), transcript.DefaultLimits())
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(ts), 2, "a story takes more than one conversation")

			scope := ts[0].Scope
			var last time.Time
			for i, tr := range ts {
				require.Equal(t, scope, tr.Scope, "record %d: one scope per file", i+1)
				require.NotEmpty(t, tr.ID, "record %d: id", i+1)
				require.NotContains(t, ids, tr.ID, "record %d: id %s also in %s", i+1, tr.ID, ids[tr.ID])
				ids[tr.ID] = name
				require.NotNil(t, tr.OccurredAt, "record %d: occurred_at", i+1)
				require.Equal(t, 2026, tr.OccurredAt.Year(), "record %d", i+1)
				require.Equal(t, time.UTC, tr.OccurredAt.Location(), "record %d: occurred_at in UTC (Z)", i+1)
				require.True(t, tr.OccurredAt.After(last), "record %d: conversations in time order", i+1)
				last = *tr.OccurredAt
				require.GreaterOrEqual(t, len(tr.Messages), 2, "record %d: a conversation", i+1)
			}
			require.NotContains(t, scopes, scope, "scope %s also used by %s", scope, scopes[scope])
			scopes[scope] = name
		})
	}
}
