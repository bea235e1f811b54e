package transcript_test

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/credohq/credo/redact"
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

// BenchmarkParseRedact is enqueue's work before the database per conversation: parse,
// then redact every message (extract.RedactTx with every detector, REDACT's default).
// The same 500 conversations of 20 messages as BenchmarkParse, as JSON lines: parse
// alone, parse and redact ordinary talk, and parse and redact conversations of which
// one message each holds a card number, an API key and a password. ns/op is per input
// of 500 conversations.
func BenchmarkParseRedact(b *testing.B) {
	talk := []string{
		"I moved to Lisbon last month and started at a bakery near the river; my sister lives in Porto.",
		"Can you remind me on Friday 2026-03-20 at 14:00? Call +351 912 345 678 if the order 112-3456789-1234567 is late.",
		"We paid 1,299.99 EUR for the sofa, invoice INV-2026-000123, and the password is required at the door.",
	}
	secret := "My card is 4111 1111 1111 1111, my key AKIAQWERTYUIOPASDFGH and my password is hunter2-Pa55."
	input := func(withSecrets bool) string {
		var recs []string
		for i := range 500 {
			var msgs []string
			for j := range 20 {
				content := talk[(i+j)%len(talk)]
				if withSecrets && j == 7 {
					content = secret
				}
				msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":%q}`, []string{"user", "assistant"}[j%2], content))
			}
			recs = append(recs, fmt.Sprintf(`{"scope":"user:%d","id":"conv-%d","occurred_at":"2026-01-02T10:00:00Z","messages":[%s]}`,
				i%7, i, strings.Join(msgs, ",")))
		}
		return strings.Join(recs, "\n")
	}
	r := redact.Default()
	for _, c := range []struct {
		name    string
		input   string
		redact  bool
		secrets int
	}{
		{"parse", input(false), false, 0},
		{"parse+redact", input(false), true, 0},
		{"parse+redact/secrets", input(true), true, 1500},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.input)))
			// The machine is shared: the process's CPU time per op is steadier than
			// the wall clock's.
			cpu := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				ts, err := transcript.Parse("bench", strings.NewReader(c.input), now, transcript.Limits{})
				if err != nil || len(ts) != 500 {
					b.Fatalf("%d records, %v", len(ts), err)
				}
				if !c.redact {
					continue
				}
				found := 0
				for _, t := range ts {
					for _, m := range t.Messages {
						_, counts := r.Text(m.Content)
						found += counts.Total()
					}
				}
				if found != c.secrets {
					b.Fatalf("%d secrets redacted, want %d", found, c.secrets)
				}
			}
		})
	}
}

// cpuTime is the CPU time the process has used, user and system, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
