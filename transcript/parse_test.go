package transcript_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/transcript"
)

var now = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)

// rec is a valid one-line record with the given scope.
func rec(scope string) string {
	return `{"scope":"` + scope + `","messages":[{"role":"user","content":"hi"}]}`
}

func scopes(ts []transcript.Transcript) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Scope)
	}
	return out
}

func TestParseLayouts(t *testing.T) {
	t.Parallel()
	full := transcript.Transcript{
		Scope:      "user:42",
		ID:         "conv-0320",
		OccurredAt: new(time.Date(2026, 3, 20, 14, 0, 0, 0, time.UTC)),
		Messages: []transcript.Message{
			{Role: "user", Name: "Ana", Content: "I moved to Miami last month."},
			{Role: "assistant", Content: "Noted!", At: new(time.Date(2026, 3, 20, 14, 0, 5, 0, time.UTC))},
		},
	}
	tests := []struct {
		name   string
		input  string
		scopes []string
	}{
		{"object on one line", rec("a"), []string{"a"}},
		{"object on one line with a line feed", rec("a") + "\n", []string{"a"}},
		{"pretty-printed object", "{\n  \"scope\": \"a\",\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hi\"}\n  ]\n}\n", []string{"a"}},
		{"pretty-printed objects one after another", "{\n\"scope\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]\n}\n{\n\"scope\": \"b\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]\n}", []string{"a", "b"}},
		{"objects on one line", rec("a") + " " + rec("b"), []string{"a", "b"}},
		{"array", "[" + rec("a") + ",\n " + rec("b") + "]", []string{"a", "b"}},
		{"pretty-printed array", "[\n  {\n    \"scope\": \"a\",\n    \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]\n  }\n]\n", []string{"a"}},
		{"array with white space first", " \n\t[" + rec("a") + "]  \n", []string{"a"}},
		{"JSON lines", rec("a") + "\n" + rec("b") + "\n" + rec("c") + "\n", []string{"a", "b", "c"}},
		{"JSON lines without the last line feed", rec("a") + "\n" + rec("b"), []string{"a", "b"}},
		{"JSON lines with blank lines", "\n\n" + rec("a") + "\n\n   \n" + rec("b") + "\n\t\n", []string{"a", "b"}},
		{"JSON lines with CRLF", rec("a") + "\r\n" + rec("b") + "\r\n\r\n" + rec("c") + "\r\n", []string{"a", "b", "c"}},
		{"byte order mark", "\xef\xbb\xbf" + rec("a") + "\n" + rec("b") + "\n", []string{"a", "b"}},
		{"null optional fields", `{"scope":"a","id":null,"occurred_at":null,"messages":[{"role":"user","name":null,"content":"hi","at":null}]}`, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, err := transcript.Parse("in.json", strings.NewReader(tt.input), now, transcript.DefaultLimits())
			require.NoError(t, err)
			require.Equal(t, tt.scopes, scopes(ts))
			for _, tr := range ts {
				require.Equal(t, []transcript.Message{{Role: "user", Content: "hi"}}, tr.Messages)
				require.Empty(t, tr.ID)
				require.Nil(t, tr.OccurredAt)
			}
		})
	}

	t.Run("all fields", func(t *testing.T) {
		t.Parallel()
		input := `{"scope": "user:42", "id": "conv-0320", "occurred_at": "2026-03-20T14:00:00Z",
		 "messages": [{"role": "user", "name": "Ana", "content": "I moved to Miami last month."},
		              {"role": "assistant", "content": "Noted!", "at": "2026-03-20T14:00:05Z"}]}`
		for _, in := range []string{input, "[" + input + "]", strings.ReplaceAll(input, "\n", " ") + "\n"} {
			ts, err := transcript.Parse("in.json", strings.NewReader(in), now, transcript.DefaultLimits())
			require.NoError(t, err)
			require.Equal(t, []transcript.Transcript{full}, ts)
		}
	})

	t.Run("time zones and RFC 3339 variants", func(t *testing.T) {
		t.Parallel()
		in := `{"scope":"a","occurred_at":"2026-03-20T16:00:00.123456789+02:00","messages":[` +
			`{"role":"user","content":"x","at":"2026-03-20t14:00:00z"},` +
			`{"role":"user","content":"x","at":"2026-03-20 14:00:00-05:30"}]}`
		ts, err := transcript.Parse("in.json", strings.NewReader(in), now, transcript.DefaultLimits())
		require.NoError(t, err)
		require.Len(t, ts, 1)
		require.True(t, ts[0].OccurredAt.Equal(time.Date(2026, 3, 20, 14, 0, 0, 123456789, time.UTC)))
		_, offset := ts[0].OccurredAt.Zone()
		require.Equal(t, 2*3600, offset, "the zone is kept as given")
		require.True(t, ts[0].Messages[0].At.Equal(time.Date(2026, 3, 20, 14, 0, 0, 0, time.UTC)))
		require.True(t, ts[0].Messages[1].At.Equal(time.Date(2026, 3, 20, 19, 30, 0, 0, time.UTC)))
	})

	t.Run("multi-line content", func(t *testing.T) {
		t.Parallel()
		in := `{"scope":"a","messages":[{"role":"tool","content":"line 1\nline 2\r\n\ttabbed \u00e9 \ud83d\ude00"}]}`
		ts, err := transcript.Parse("in.jsonl", strings.NewReader(in), now, transcript.DefaultLimits())
		require.NoError(t, err)
		require.Equal(t, "line 1\nline 2\r\n\ttabbed é 😀", ts[0].Messages[0].Content)
	})
}

func TestParseStdinName(t *testing.T) {
	t.Parallel()
	ts, err := transcript.Parse("-", strings.NewReader(rec("a")+"\n"), now, transcript.DefaultLimits())
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, scopes(ts))

	_, err = transcript.Parse("-", strings.NewReader(rec("a")+"\n{\"messages\":[]}\n"), now, transcript.DefaultLimits())
	require.EqualError(t, err, "<stdin>: record 2 (line 2): scope: missing\n"+
		"<stdin>: record 2 (line 2): messages: is empty; a transcript needs at least one message")

	_, err = transcript.Parse("", strings.NewReader(`{"messages":[]}`), now, transcript.DefaultLimits())
	require.EqualError(t, err, "record 1 (line 1): scope: missing\n"+
		"record 1 (line 1): messages: is empty; a transcript needs at least one message", "no name, no file")
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	// msg builds a one-record input around one message object.
	msg := func(m string) string { return `{"scope":"a","messages":[` + m + `]}` }
	long := strings.Repeat("é", 201)
	tests := []struct {
		name  string
		file  string
		input string
		want  string
	}{
		// reading
		{"empty input", "in.json", "", "in.json: no records"},
		{"only white space", "in.jsonl", " \r\n\n\t", "in.jsonl: no records"},
		{"empty array", "in.json", " [ ] ", "in.json: no records"},
		{"truncated object", "bad.json", `{"scope": "a", "messages": [`, "bad.json: record 1 (line 1): invalid JSON: unexpected end of input"},
		{"truncated object and a newline", "bad.jsonl", `{"scope": "a", "messages": [` + "\n", "bad.jsonl: record 1 (line 1): invalid JSON: unexpected end of input"},
		{"truncated pretty object", "bad.json", "{\n  \"scope\": \"a\",\n  \"messages\": [\n\n", "bad.json: record 1 (line 3): invalid JSON: unexpected end of input"},
		{"truncated JSON line", "in.jsonl", rec("a") + "\n" + `{"scope": "b", "messages": [` + "\r\n", "in.jsonl: record 2 (line 2): invalid JSON: unexpected end of input"},
		{"syntax error in a pretty object", "bad.json", "{\n  \"scope\": \"a\",\n  \"messages\": [{\"role\": \"user\", \"content\": \"hi\",}]\n}\n",
			`bad.json: record 1 (line 3): invalid JSON: invalid character '}' looking for beginning of object key string`},
		{"brackets that don't match", "bad.json", "{\n\"scope\": \"a\", \"messages\": [{\"role\": \"user\"]\n}",
			`bad.json: record 1 (line 2): invalid JSON: unexpected ']', expected '}'`},
		{"broken JSON line", "in.jsonl", rec("a") + "\n{\"scope\": \"b\", \"messages\": [\n" + rec("c") + "\n",
			"in.jsonl: record 2 (line 2): invalid JSON: unexpected end of input"},
		{"two objects on a JSON line", "in.jsonl", rec("a") + "\n" + rec("b") + " " + rec("c") + "\n",
			`in.jsonl: record 2 (line 2): invalid JSON: unexpected '{' after the end of the record`},
		{"number", "x.json", "42", "x.json: record 1 (line 1): must be a JSON object, not a number"},
		{"string", "x.json", `"hello"`, "x.json: record 1 (line 1): must be a JSON object, not a string"},
		{"not JSON", "x.json", "scope: a\n", "x.json: record 1 (line 1): invalid JSON: invalid character 's' looking for beginning of value"},
		{"array holding a string", "x.json", "[\n" + rec("a") + ",\n\"b\"\n]", "x.json: record 2 (line 3): must be a JSON object, not a string"},
		{"array holding an array", "x.json", "[[" + rec("a") + "]]", "x.json: record 1 (line 1): must be a JSON object, not an array"},
		{"JSON line holding an array", "x.jsonl", rec("a") + "\n[" + rec("b") + "]\n", "x.jsonl: record 2 (line 2): must be a JSON object, not an array"},
		{"unclosed array", "x.json", "[" + rec("a") + ",\n" + rec("b"), "x.json: line 2: invalid JSON: unexpected end of input; the array is not closed"},
		{"trailing comma in an array", "x.json", "[" + rec("a") + ",]", `x.json: line 1: invalid JSON: "," before the closing "]"`},
		{"missing comma in an array", "x.json", "[" + rec("a") + " " + rec("b") + "]", `x.json: line 1: invalid JSON: expected "," or "]" after record 1, found '{'`},
		{"data after an array", "x.json", "[" + rec("a") + "]\n[" + rec("b") + "]", `x.json: line 2: invalid JSON: unexpected '[' after the closing "]"`},
		{"comma between objects", "x.json", rec("a") + ",\n" + rec("b"), `x.json: record 2 (line 1): invalid JSON: unexpected ','`},

		// fields
		{"unknown field", "x.json", `{"scope":"a","ocurred_at":"2026-03-20T14:00:00Z","messages":[{"role":"user","content":"hi"}]}`,
			"x.json: record 1 (line 1): ocurred_at: unknown field (did you mean occurred_at?)"},
		{"unknown field, no guess", "x.json", `{"scope":"a","mood":"happy","messages":[{"role":"user","content":"hi"}]}`,
			"x.json: record 1 (line 1): mood: unknown field; the fields are scope, id, occurred_at, messages"},
		{"field names are case-sensitive", "x.json", `{"Scope":"a","messages":[{"role":"user","content":"hi"}]}`,
			"x.json: record 1 (line 1): scope: missing\nx.json: record 1 (line 1): Scope: unknown field (did you mean scope?)"},
		{"unknown message field", "x.json", msg(`{"role":"user","text":"hi"}`),
			"x.json: record 1 (line 1): messages[0].content: missing\nx.json: record 1 (line 1): messages[0].text: unknown field (did you mean content?)"},
		{"odd field name", "x.json", msg(`{"role":"user","content":"hi","a b":1}`),
			`x.json: record 1 (line 1): messages[0]."a b": unknown field; the fields are role, name, content, at`},
		{"repeated field", "x.json", `{"scope":"a","scope":"b","messages":[{"role":"user","content":"hi"}]}`,
			"x.json: record 1 (line 1): scope: appears more than once"},
		{"scope missing", "in.jsonl", rec("a") + "\n" + `{"messages":[{"role":"user","content":"hi"}]}` + "\n", "in.jsonl: record 2 (line 2): scope: missing"},
		{"scope null", "x.json", `{"scope":null,"messages":[{"role":"user","content":"hi"}]}`, "x.json: record 1 (line 1): scope: must be a string, not null"},
		{"scope a number", "x.json", `{"scope":42,"messages":[{"role":"user","content":"hi"}]}`, "x.json: record 1 (line 1): scope: must be a string, not a number"},
		{"scope empty", "x.json", rec(""), "x.json: record 1 (line 1): scope: is empty"},
		{"scope blank", "x.json", rec(" \\t "), "x.json: record 1 (line 1): scope: is blank"},
		{"scope with a leading space", "x.json", rec(" a"), "x.json: record 1 (line 1): scope: has leading or trailing white space"},
		{"scope with a trailing no-break space", "x.json", rec("a\u00a0"), "x.json: record 1 (line 1): scope: has leading or trailing white space"},
		{"scope with a control character", "x.json", rec(`a\nb`), "x.json: record 1 (line 1): scope: contains the control character U+000A"},
		{"scope too long", "x.json", rec(long), "x.json: record 1 (line 1): scope: is 201 characters long; the limit is 200"},
		{"id a number", "x.json", `{"scope":"a","id":7,"messages":[{"role":"user","content":"hi"}]}`, "x.json: record 1 (line 1): id: must be a string, not a number"},
		{"id too long", "x.json", `{"scope":"a","id":"` + long + `","messages":[{"role":"user","content":"hi"}]}`, "x.json: record 1 (line 1): id: is 201 characters long; the limit is 200"},
		{"id with a control character", "x.json", `{"scope":"a","id":"a\u007f","messages":[{"role":"user","content":"hi"}]}`, "x.json: record 1 (line 1): id: contains the control character U+007F"},
		{"occurred_at impossible", "x.json", `{"scope":"a","occurred_at":"2026-13-45T09:00:00Z","messages":[{"role":"user","content":"hi"}]}`,
			`x.json: record 1 (line 1): occurred_at: "2026-13-45T09:00:00Z" is not an RFC 3339 time: month out of range`},
		{"occurred_at February 30", "x.json", `{"scope":"a","occurred_at":"2026-02-30T09:00:00Z","messages":[{"role":"user","content":"hi"}]}`,
			`x.json: record 1 (line 1): occurred_at: "2026-02-30T09:00:00Z" is not an RFC 3339 time: day out of range`},
		{"occurred_at without zone", "x.json", `{"scope":"a","occurred_at":"2026-03-20T14:00:00","messages":[{"role":"user","content":"hi"}]}`,
			`x.json: record 1 (line 1): occurred_at: "2026-03-20T14:00:00" has no time zone; add Z for UTC or an offset such as +02:00`},
		{"occurred_at a date", "x.json", `{"scope":"a","occurred_at":"2026-03-20","messages":[{"role":"user","content":"hi"}]}`,
			`x.json: record 1 (line 1): occurred_at: "2026-03-20" is not an RFC 3339 time; expected a date, time and zone such as 2026-03-20T14:00:00Z`},
		{"occurred_at a number", "x.json", `{"scope":"a","occurred_at":1774015200,"messages":[{"role":"user","content":"hi"}]}`,
			`x.json: record 1 (line 1): occurred_at: must be an RFC 3339 time in a string, not a number`},
		{"occurred_at in the future", "x.json", `{"scope":"a","occurred_at":"2026-04-02T12:00:01Z","messages":[{"role":"user","content":"hi"}]}`,
			`x.json: record 1 (line 1): occurred_at: 2026-04-02T12:00:01Z is in the future: more than 24h after now (2026-04-01T12:00:00Z)`},
		{"occurred_at before 1900", "x.json", `{"scope":"a","occurred_at":"1899-12-31T23:59:59Z","messages":[{"role":"user","content":"hi"}]}`,
			`x.json: record 1 (line 1): occurred_at: 1899-12-31T23:59:59Z is before 1900`},
		{"messages missing", "x.json", `{"scope":"a"}`, "x.json: record 1 (line 1): messages: missing"},
		{"messages empty", "x.json", `{"scope":"a","messages":[]}`, "x.json: record 1 (line 1): messages: is empty; a transcript needs at least one message"},
		{"messages an object", "x.json", `{"scope":"a","messages":{"role":"user","content":"hi"}}`, "x.json: record 1 (line 1): messages: must be an array of messages, not an object"},
		{"message a string", "x.json", msg(`"hi"`), "x.json: record 1 (line 1): messages[0]: must be a JSON object, not a string"},
		{"role missing", "x.json", msg(`{"content":"hi"}`), "x.json: record 1 (line 1): messages[0].role: missing"},
		{"role unknown", "a.json", msg(`{"role":"user","content":"hi"},{"role":"wizard","content":"hi"}`),
			`a.json: record 1 (line 1): messages[1].role: "wizard" is not one of user, assistant, system, tool`},
		{"role in capitals", "a.json", msg(`{"role":"User","content":"hi"}`),
			`a.json: record 1 (line 1): messages[0].role: "User" is not one of user, assistant, system, tool`},
		{"content missing", "x.json", msg(`{"role":"user"}`), "x.json: record 1 (line 1): messages[0].content: missing"},
		{"content empty", "x.json", msg(`{"role":"user","content":""}`), "x.json: record 1 (line 1): messages[0].content: is empty"},
		{"content blank", "x.json", msg(`{"role":"user","content":" \n\t"}`), "x.json: record 1 (line 1): messages[0].content: is blank"},
		{"content parts", "x.json", msg(`{"role":"user","content":[{"type":"text","text":"hi"}]}`),
			"x.json: record 1 (line 1): messages[0].content: must be a string, not an array"},
		{"content with NUL", "x.json", msg(`{"role":"user","content":"a\u0000b"}`), "x.json: record 1 (line 1): messages[0].content: contains U+0000, which can't be stored"},
		{"name too long", "x.json", msg(`{"role":"user","name":"` + long + `","content":"hi"}`), "x.json: record 1 (line 1): messages[0].name: is 201 characters long; the limit is 200"},
		{"name with a line feed", "x.json", msg(`{"role":"user","name":"a\nb","content":"hi"}`), "x.json: record 1 (line 1): messages[0].name: contains the control character U+000A"},
		{"name a boolean", "x.json", msg(`{"role":"user","name":true,"content":"hi"}`), "x.json: record 1 (line 1): messages[0].name: must be a string, not a boolean"},
		{"at without zone", "x.json", msg(`{"role":"user","content":"hi","at":"2026-03-20T14:00:00.5"}`),
			`x.json: record 1 (line 1): messages[0].at: "2026-03-20T14:00:00.5" has no time zone; add Z for UTC or an offset such as +02:00`},
		{"at hour 25", "x.json", msg(`{"role":"user","content":"hi","at":"2026-03-20T25:00:00Z"}`),
			`x.json: record 1 (line 1): messages[0].at: "2026-03-20T25:00:00Z" is not an RFC 3339 time: hour out of range`},
		{"at in the future", "x.json", msg(`{"role":"user","content":"hi","at":"2027-01-01T00:00:00+01:00"}`),
			`x.json: record 1 (line 1): messages[0].at: 2027-01-01T00:00:00+01:00 is in the future: more than 24h after now (2026-04-01T12:00:00Z)`},
		{"at year 0", "x.json", msg(`{"role":"user","content":"hi","at":"0000-01-01T00:00:00Z"}`),
			`x.json: record 1 (line 1): messages[0].at: 0000-01-01T00:00:00Z is before 1900`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, err := transcript.Parse(tt.file, strings.NewReader(tt.input), now, transcript.DefaultLimits())
			require.EqualError(t, err, tt.want)
			require.Nil(t, ts)
			var errs transcript.Errors
			require.ErrorAs(t, err, &errs)
			var one *transcript.Error
			require.ErrorAs(t, err, &one)
			require.Equal(t, tt.file, one.File)
		})
	}
}

func TestParseManyProblems(t *testing.T) {
	t.Parallel()
	input := strings.Join([]string{
		rec("a"),
		`{"scope":"","messages":[{"role":"bot","content":"hi"}]}`,
		"",
		rec("b"),
		`{"scope":"c","messages":[{"role":"user","content":"hi","at":"2026-03-20"}]}`,
		"{oops}",
	}, "\n")
	_, err := transcript.Parse("in.jsonl", strings.NewReader(input), now, transcript.DefaultLimits())
	var errs transcript.Errors
	require.ErrorAs(t, err, &errs)
	require.Len(t, errs, 4)
	require.Equal(t, &transcript.Error{File: "in.jsonl", Record: 2, Line: 2, Field: "scope", Problem: "is empty"}, errs[0])
	require.Equal(t, &transcript.Error{File: "in.jsonl", Record: 2, Line: 2, Field: "messages[0].role",
		Problem: `"bot" is not one of user, assistant, system, tool`}, errs[1])
	require.Equal(t, 4, errs[2].Record)
	require.Equal(t, 5, errs[2].Line)
	require.Equal(t, "messages[0].at", errs[2].Field)
	require.Equal(t, "in.jsonl: record 5 (line 6): invalid JSON: invalid character 'o' looking for beginning of object key string", errs[3].Error())

	t.Run("more than twenty", func(t *testing.T) {
		t.Parallel()
		var b strings.Builder
		for i := range 30 {
			fmt.Fprintf(&b, `{"scope":"s%d","messages":[{"role":"user","content":""}]}`+"\n", i)
		}
		_, err := transcript.Parse("in.jsonl", strings.NewReader(b.String()), now, transcript.DefaultLimits())
		var errs transcript.Errors
		require.ErrorAs(t, err, &errs)
		require.Len(t, errs, 30)
		lines := strings.Split(err.Error(), "\n")
		require.Len(t, lines, 21)
		require.Equal(t, "in.jsonl: record 20 (line 20): messages[0].content: is empty", lines[19])
		require.Equal(t, "and 10 more", lines[20])
	})

	t.Run("stops at a thousand", func(t *testing.T) {
		t.Parallel()
		input := strings.Repeat(`{"scope":"","messages":[]}`+"\n", 2000)
		_, err := transcript.Parse("in.jsonl", strings.NewReader(input), now, transcript.DefaultLimits())
		var errs transcript.Errors
		require.ErrorAs(t, err, &errs)
		require.Len(t, errs, 1001)
		require.Equal(t, "in.jsonl: too many problems; stopped checking at record 500", errs[1000].Error())
	})
}

// repeatReader yields n copies of c without holding them.
type repeatReader struct {
	c     byte
	n     int
	block []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	if r.block == nil {
		r.block = bytes.Repeat([]byte{r.c}, 64<<10)
	}
	k := copy(p[:min(len(p), r.n)], r.block)
	r.n -= k
	return k, nil
}

// TestParseHugeRecord is not parallel so that it can measure what Parse
// allocates: the other tests wait while it runs.
func TestParseHugeRecord(t *testing.T) {
	const size = 50 << 20
	prefix := `{"scope":"a","messages":[{"role":"user","content":"`
	suffix := `"}]}`
	huge := func() io.Reader {
		return io.MultiReader(strings.NewReader(prefix), &repeatReader{c: 'a', n: size}, strings.NewReader(suffix))
	}
	recSize := len(prefix) + size + len(suffix)
	tests := []struct {
		name  string
		input func() io.Reader
		want  string
	}{
		{"single object", huge, fmt.Sprintf("big.json: record 1 (line 1): record is %d bytes; the limit is 2097152", recSize)},
		{"JSON line", func() io.Reader {
			return io.MultiReader(strings.NewReader(rec("a")+"\n"), huge(), strings.NewReader("\r\n"+rec("b")+"\n"+rec("")+"\n"))
		}, fmt.Sprintf("big.json: record 2 (line 2): record is %d bytes; the limit is 2097152\n"+
			"big.json: record 4 (line 4): scope: is empty", recSize)},
		{"array element", func() io.Reader {
			return io.MultiReader(strings.NewReader("[\n"+rec("a")+",\n"), huge(), strings.NewReader(",\n"+rec("")+"]"))
		}, fmt.Sprintf("big.json: record 2 (line 3): record is %d bytes; the limit is 2097152\n"+
			"big.json: record 3 (line 4): scope: is empty", recSize)},
		{"line without end", func() io.Reader {
			return io.MultiReader(strings.NewReader(rec("a")+"\n"), &repeatReader{c: 'x', n: size})
		}, fmt.Sprintf("big.json: record 2 (line 2): record is %d bytes; the limit is 2097152", size)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ts, err := transcript.Parse("big.json", tt.input(), now, transcript.DefaultLimits())
			runtime.ReadMemStats(&after)
			require.EqualError(t, err, tt.want)
			require.Nil(t, ts)
			t.Logf("allocated %d KiB", (after.TotalAlloc-before.TotalAlloc)>>10)
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(12<<20), "bytes allocated")
		})
	}
}

func TestParseInvalidUTF8(t *testing.T) {
	t.Parallel()
	// at is the offset of bad in record.
	at := strings.Index
	badContent := `{"scope":"b","messages":[{"role":"user","content":"caf` + "\xe9" + `"}]}`
	badPretty := "{\n\"scope\": \"a\",\n\"messages\": [{\"role\": \"user\", \"content\": \"\xff\"}]\n}"
	badScope := `{"scope":"` + "\xc3\x28" + `","messages":[{"role":"user","content":"hi"}]}`
	badName := `{"scope":"a","messages":[{"role":"user","content":"hi","` + "\xed\xa0\x80" + `":1}]}` // a UTF-16 surrogate
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"in content", rec("a") + "\n" + badContent + "\n",
			fmt.Sprintf("in.json: record 2 (line 2): invalid UTF-8: byte 0xe9 at offset %d of the record", at(badContent, "\xe9"))},
		{"in a pretty object", badPretty,
			fmt.Sprintf("in.json: record 1 (line 3): invalid UTF-8: byte 0xff at offset %d of the record", at(badPretty, "\xff"))},
		{"in an array", "[" + rec("a") + ",\n" + badScope + "]",
			"in.json: record 2 (line 2): invalid UTF-8: byte 0xc3 at offset 10 of the record"},
		{"in a field name", badName,
			fmt.Sprintf("in.json: record 1 (line 1): invalid UTF-8: byte 0xed at offset %d of the record", at(badName, "\xed"))},
		{"between records", rec("a") + "\n\xff\n",
			"in.json: record 2 (line 2): invalid UTF-8: byte 0xff at offset 0 of the record"},
		{"after an array", "[" + rec("a") + "]\xfe",
			`in.json: line 1: invalid JSON: unexpected byte 0xfe after the closing "]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := transcript.Parse("in.json", strings.NewReader(tt.input), now, transcript.DefaultLimits())
			require.EqualError(t, err, tt.want)
		})
	}
}

func TestParseLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		lim   transcript.Limits
		want  string
	}{
		{"record size", rec("a") + "\n" + rec("bb") + "\n", transcript.Limits{MaxBytes: len(rec("a"))},
			fmt.Sprintf("in.json: record 2 (line 2): record is %d bytes; the limit is %d", len(rec("bb")), len(rec("a")))},
		{"record size with CRLF and spaces", "  " + rec("a") + " \r\n", transcript.Limits{MaxBytes: len(rec("a"))}, ""},
		{"messages", `{"scope":"a","messages":[{"role":"user","content":"1"},{"role":"user","content":"2"},{"role":"user","content":"3"}]}`,
			transcript.Limits{MaxMessages: 2}, "in.json: record 1 (line 1): messages: has 3 messages; the limit is 2"},
		{"scope length", rec("abcd"), transcript.Limits{MaxScopeLen: 3}, "in.json: record 1 (line 1): scope: is 4 characters long; the limit is 3"},
		{"future", `{"scope":"a","occurred_at":"2026-04-01T12:01:01Z","messages":[{"role":"user","content":"hi"}]}`,
			transcript.Limits{MaxFuture: time.Minute}, "in.json: record 1 (line 1): occurred_at: 2026-04-01T12:01:01Z is in the future: more than 1m after now (2026-04-01T12:00:00Z)"},
		{"records in JSON lines", rec("a") + "\n" + rec("b") + "\n\n" + rec("c") + "\n", transcript.Limits{MaxRecords: 2},
			"in.json: line 4: more than 2 records; split the input into smaller files"},
		{"records in an array", "[" + rec("a") + "," + rec("b") + "," + rec("c") + "]", transcript.Limits{MaxRecords: 2},
			"in.json: line 1: more than 2 records; split the input into smaller files"},
		{"records exactly", rec("a") + "\n" + rec("b") + "\n", transcript.Limits{MaxRecords: 2}, ""},
		{"total bytes", strings.Repeat(rec("a")+"\n", 100), transcript.Limits{MaxTotalBytes: 1000},
			fmt.Sprintf("in.json: line %d: input is more than 1000 bytes; split it into smaller files", 1000/(len(rec("a"))+1)+1)},
		{"total bytes in an array", "[" + strings.Repeat(rec("a")+",", 100) + rec("a") + "]", transcript.Limits{MaxTotalBytes: 1000},
			"in.json: line 1: input is more than 1000 bytes; split it into smaller files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := transcript.Parse("in.json", strings.NewReader(tt.input), now, tt.lim)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.want)
		})
	}
}

type failingReader struct {
	data io.Reader
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	n, err := r.data.Read(p)
	if err == io.EOF {
		return n, r.err
	}
	return n, err
}

func TestParseReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	for _, input := range []string{"", rec("a") + "\n" + rec("b"), "[" + rec("a"), rec("a")[:20]} {
		_, err := transcript.Parse("in.json", &failingReader{strings.NewReader(input), boom}, now, transcript.DefaultLimits())
		require.ErrorIs(t, err, boom, "input %q", input)
		require.Contains(t, err.Error(), "in.json: ")
		require.Contains(t, err.Error(), "read error: boom")
	}
}
