package transcript_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/transcript"
)

func valid() transcript.Transcript {
	return transcript.Transcript{
		Scope:      "user:42",
		ID:         "conv-0320",
		OccurredAt: new(time.Date(2026, 3, 20, 14, 0, 0, 0, time.UTC)),
		Messages: []transcript.Message{
			{Role: "user", Name: "Ana", Content: "I moved to Miami last month."},
			{Role: "assistant", Content: "Noted!", At: new(time.Date(2026, 3, 20, 14, 0, 5, 0, time.UTC))},
		},
	}
}

func TestDefaultLimits(t *testing.T) {
	t.Parallel()
	require.Equal(t, transcript.Limits{
		MaxBytes:      2 << 20,
		MaxMessages:   2000,
		MaxFuture:     24 * time.Hour,
		MaxScopeLen:   200,
		MaxRecords:    100_000,
		MaxTotalBytes: 1 << 30,
	}, transcript.DefaultLimits())
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		edit   func(*transcript.Transcript)
		lim    transcript.Limits
		fields []string // the fields with problems, in order
	}{
		{"valid", func(*transcript.Transcript) {}, transcript.Limits{}, nil},
		{"valid without optional fields", func(tr *transcript.Transcript) {
			tr.ID, tr.OccurredAt, tr.Messages[0].Name, tr.Messages[1].At = "", nil, "", nil
		}, transcript.Limits{}, nil},
		{"zero transcript", func(tr *transcript.Transcript) { *tr = transcript.Transcript{} }, transcript.Limits{}, []string{"scope", "messages"}},
		{"scope invalid UTF-8", func(tr *transcript.Transcript) { tr.Scope = "a\xff" }, transcript.Limits{}, []string{"scope"}},
		{"scope at the limit", func(tr *transcript.Transcript) { tr.Scope = strings.Repeat("ü", 10) }, transcript.Limits{MaxScopeLen: 10}, nil},
		{"scope over the limit", func(tr *transcript.Transcript) { tr.Scope = strings.Repeat("ü", 11) }, transcript.Limits{MaxScopeLen: 10}, []string{"scope"}},
		{"scope with a tab", func(tr *transcript.Transcript) { tr.Scope = "a\tb" }, transcript.Limits{}, []string{"scope"}},
		{"id at the limit", func(tr *transcript.Transcript) { tr.ID = strings.Repeat("x", 200) }, transcript.Limits{}, nil},
		{"id over the limit", func(tr *transcript.Transcript) { tr.ID = strings.Repeat("x", 201) }, transcript.Limits{}, []string{"id"}},
		{"occurred_at just in time", func(tr *transcript.Transcript) { tr.OccurredAt = new(now.Add(24 * time.Hour)) }, transcript.Limits{}, nil},
		{"occurred_at too late", func(tr *transcript.Transcript) { tr.OccurredAt = new(now.Add(24*time.Hour + 1)) }, transcript.Limits{}, []string{"occurred_at"}},
		{"occurred_at zero", func(tr *transcript.Transcript) { tr.OccurredAt = &time.Time{} }, transcript.Limits{}, []string{"occurred_at"}},
		{"no messages", func(tr *transcript.Transcript) { tr.Messages = nil }, transcript.Limits{}, []string{"messages"}},
		{"too many messages", func(tr *transcript.Transcript) {}, transcript.Limits{MaxMessages: 1}, []string{"messages"}},
		{"bad messages", func(tr *transcript.Transcript) {
			tr.Messages[0].Role = ""
			tr.Messages[0].Content = "\u00a0"
			tr.Messages[1].Name = strings.Repeat("n", 201)
			tr.Messages[1].At = new(time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC))
		}, transcript.Limits{}, []string{"messages[0].role", "messages[0].content", "messages[1].name", "messages[1].at"}},
		{"content with control characters is fine", func(tr *transcript.Transcript) { tr.Messages[0].Content = "\x1b[31mred\x1b[0m\a" }, transcript.Limits{}, nil},
		{"content invalid UTF-8", func(tr *transcript.Transcript) { tr.Messages[0].Content = "\xc0" }, transcript.Limits{}, []string{"messages[0].content"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := valid()
			tt.edit(&tr)
			err := tr.Validate(now, tt.lim)
			if tt.fields == nil {
				require.NoError(t, err)
				return
			}
			var errs transcript.Errors
			require.ErrorAs(t, err, &errs)
			var fields []string
			for _, e := range errs {
				require.Empty(t, e.File)
				require.Zero(t, e.Record)
				require.Zero(t, e.Line)
				require.NotEmpty(t, e.Problem)
				fields = append(fields, e.Field)
			}
			require.Equal(t, tt.fields, fields)
		})
	}

	t.Run("messages", func(t *testing.T) {
		t.Parallel()
		tr := valid()
		tr.Scope = ""
		tr.Messages[1].Role = "bot"
		require.EqualError(t, tr.Validate(now, transcript.DefaultLimits()),
			"scope: is empty\nmessages[1].role: \"bot\" is not one of user, assistant, system, tool")
	})

	t.Run("zero now is the current time", func(t *testing.T) {
		t.Parallel()
		tr := valid()
		tr.OccurredAt = new(time.Now().Add(time.Hour))
		require.NoError(t, tr.Validate(time.Time{}, transcript.Limits{}))
		tr.OccurredAt = new(time.Now().Add(25 * time.Hour))
		require.Error(t, tr.Validate(time.Time{}, transcript.Limits{}))
	})
}

func TestContentHash(t *testing.T) {
	t.Parallel()
	base := valid().ContentHash()
	require.Regexp(t, `^[0-9a-f]{64}$`, base)
	require.Equal(t, base, valid().ContentHash(), "stable")

	same := []struct {
		name string
		edit func(*transcript.Transcript)
	}{
		{"other scope", func(tr *transcript.Transcript) { tr.Scope = "user:43" }},
		{"other id", func(tr *transcript.Transcript) { tr.ID = "" }},
		{"same instant in another zone", func(tr *transcript.Transcript) {
			tr.OccurredAt = new(tr.OccurredAt.In(time.FixedZone("", 2*3600)))
			tr.Messages[1].At = new(tr.Messages[1].At.In(time.FixedZone("", -5*3600)))
		}},
		{"copied messages", func(tr *transcript.Transcript) { tr.Messages = append([]transcript.Message(nil), tr.Messages...) }},
	}
	for _, tt := range same {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := valid()
			tt.edit(&tr)
			require.Equal(t, base, tr.ContentHash())
		})
	}

	different := []struct {
		name string
		edit func(*transcript.Transcript)
	}{
		{"no occurred_at", func(tr *transcript.Transcript) { tr.OccurredAt = nil }},
		{"occurred_at a nanosecond later", func(tr *transcript.Transcript) { tr.OccurredAt = new(tr.OccurredAt.Add(1)) }},
		{"role", func(tr *transcript.Transcript) { tr.Messages[0].Role = "system" }},
		{"name", func(tr *transcript.Transcript) { tr.Messages[0].Name = "Bea" }},
		{"no name", func(tr *transcript.Transcript) { tr.Messages[0].Name = "" }},
		{"content", func(tr *transcript.Transcript) { tr.Messages[0].Content += " " }},
		{"at", func(tr *transcript.Transcript) { tr.Messages[1].At = new(tr.Messages[1].At.Add(time.Second)) }},
		{"no at", func(tr *transcript.Transcript) { tr.Messages[1].At = nil }},
		{"message order", func(tr *transcript.Transcript) { tr.Messages[0], tr.Messages[1] = tr.Messages[1], tr.Messages[0] }},
		{"one message less", func(tr *transcript.Transcript) { tr.Messages = tr.Messages[:1] }},
		{"one message more", func(tr *transcript.Transcript) {
			tr.Messages = append(tr.Messages, transcript.Message{Role: "user", Content: "Bye"})
		}},
		{"text moved between name and content", func(tr *transcript.Transcript) {
			tr.Messages[0].Name, tr.Messages[0].Content = "Ana I", "moved to Miami last month."
		}},
		{"text moved between messages", func(tr *transcript.Transcript) {
			tr.Messages[0].Content, tr.Messages[1].Content = "I moved to Miami last month.Noted", "!"
		}},
	}
	seen := map[string]string{base: "base"}
	for _, tt := range different {
		tr := valid()
		tt.edit(&tr)
		h := tr.ContentHash()
		require.NotContains(t, seen, h, "%s hashes like %s", tt.name, seen[h])
		seen[h] = tt.name
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	tr := valid()
	tr.OccurredAt = new(time.Date(2026, 3, 20, 16, 0, 0, 1, time.FixedZone("", 2*3600)))
	b, err := json.Marshal([]transcript.Transcript{tr, valid()})
	require.NoError(t, err)
	ts, err := transcript.Parse("out.json", bytes.NewReader(b), now, transcript.DefaultLimits())
	require.NoError(t, err)
	require.Len(t, ts, 2)
	require.True(t, tr.OccurredAt.Equal(*ts[0].OccurredAt))
	require.Equal(t, tr.ContentHash(), ts[0].ContentHash())
	require.Equal(t, valid(), ts[1])
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  transcript.Error
		want string
	}{
		{transcript.Error{File: "in.jsonl", Record: 2, Line: 2, Field: "scope", Problem: "missing"}, "in.jsonl: record 2 (line 2): scope: missing"},
		{transcript.Error{File: "a.json", Record: 1, Field: "messages[0].role", Problem: "bad"}, "a.json: record 1: messages[0].role: bad"},
		{transcript.Error{File: "bad.json", Record: 1, Problem: "invalid JSON: unexpected end of input"}, "bad.json: record 1: invalid JSON: unexpected end of input"},
		{transcript.Error{File: "x.json", Line: 3, Problem: "trailing data"}, "x.json: line 3: trailing data"},
		{transcript.Error{File: "x.json", Problem: "no records"}, "x.json: no records"},
		{transcript.Error{Field: "scope", Problem: "is empty"}, "scope: is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			require.EqualError(t, &tt.err, tt.want)
		})
	}

	t.Run("errors.As and errors.Is", func(t *testing.T) {
		t.Parallel()
		first := &transcript.Error{Field: "scope", Problem: "is empty"}
		var err error = transcript.Errors{first, {Field: "id", Problem: "too long"}}
		var one *transcript.Error
		require.ErrorAs(t, err, &one)
		require.Same(t, first, one)
		require.ErrorIs(t, err, first)
		require.Equal(t, "scope: is empty\nid: too long", err.Error())
	})
}
