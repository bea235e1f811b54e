package transcript_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/credohq/credo/transcript"
)

// BenchmarkParse reads an import of 500 conversations of 20 messages each, in the three
// layouts Parse accepts: the path every enqueue and bulk import takes.
func BenchmarkParse(b *testing.B) {
	var recs []string
	for i := range 500 {
		var msgs []string
		for j := range 20 {
			role := []string{"user", "assistant"}[j%2]
			msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":"message %d of conversation %d: \"quoted\" and \\ escaped, %s"}`,
				role, j, i, strings.Repeat("some words ", 20)))
		}
		recs = append(recs, fmt.Sprintf(`{"scope":"user:%d","id":"conv-%d","occurred_at":"2026-01-02T10:00:00Z","messages":[%s]}`,
			i%7, i, strings.Join(msgs, ",")))
	}
	for _, layout := range []struct{ name, input string }{
		{"lines", strings.Join(recs, "\n")},
		{"array", "[\n" + strings.Join(recs, ",\n") + "\n]"},
		{"pretty", strings.Join(recs, "\n\n  ")},
	} {
		b.Run(layout.name, func(b *testing.B) {
			b.SetBytes(int64(len(layout.input)))
			for b.Loop() {
				ts, err := transcript.Parse("bench", bytes.NewReader([]byte(layout.input)), now, transcript.Limits{})
				if err != nil || len(ts) != 500 {
					b.Fatalf("%d records, %v", len(ts), err)
				}
			}
		})
	}
}
