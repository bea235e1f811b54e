package transcript_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/credohq/credo/transcript"
)

func ExampleParse() {
	input := `{"scope": "user:42", "id": "conv-0320", "occurred_at": "2026-03-20T14:00:00Z", "messages": [{"role": "user", "content": "I moved to Miami last month."}, {"role": "assistant", "content": "Noted!"}]}

{"scope": "user:42", "messages": [{"role": "user", "name": "Ana", "content": "Book me a table\nfor two.", "at": "2026-03-21T19:30:00+01:00"}]}
`
	now := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	ts, err := transcript.Parse("in.jsonl", strings.NewReader(input), now, transcript.DefaultLimits())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range ts {
		fmt.Printf("%s %q, %d messages, first by %s\n", t.Scope, t.ID, len(t.Messages), t.Messages[0].Role)
	}

	bad := `{"scope": "user:42", "messages": [{"role": "user", "content": "hi"}]}
{"scope": "", "ocurred_at": "2026-03-20T14:00:00", "messages": [{"role": "wizard", "content": "hi"}]}
`
	_, err = transcript.Parse("bad.jsonl", strings.NewReader(bad), now, transcript.DefaultLimits())
	fmt.Println(err)
	// Output:
	// user:42 "conv-0320", 2 messages, first by user
	// user:42 "", 1 messages, first by user
	// bad.jsonl: record 2 (line 2): scope: is empty
	// bad.jsonl: record 2 (line 2): messages[0].role: "wizard" is not one of user, assistant, system, tool
	// bad.jsonl: record 2 (line 2): ocurred_at: unknown field (did you mean occurred_at?)
}

// A fact's quote is located in the message, and a quote inside a document is not the
// user's own word.
func ExampleLocate() {
	content := "Sorry, still in Berlin after all.\n\n---------- Forwarded message ---------\nFrom: Bob\nI moved to Miami!"
	docs := transcript.Documents(content)
	for _, quote := range []string{"i moved to miami", "still in Berlin … all", "I moved to Denver"} {
		s, ok := transcript.Locate(content, quote)
		if !ok {
			fmt.Printf("%q: not in the message\n", quote)
			continue
		}
		inDoc := false
		for _, d := range docs {
			inDoc = inDoc || d.Start <= s.Start && s.End <= d.End
		}
		fmt.Printf("%q: %q, in a document: %v\n", quote, content[s.Start:s.End], inDoc)
	}
	// Output:
	// "i moved to miami": "I moved to Miami", in a document: true
	// "still in Berlin … all": "still in Berlin after all", in a document: false
	// "I moved to Denver": not in the message
}
