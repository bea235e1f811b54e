// Package transcript reads, validates and renders the conversation
// transcripts that credo turns into memories.
//
// # Input
//
// An input holds one or more records, each a JSON object:
//
//	{"scope": "user:42", "id": "conv-0320", "occurred_at": "2026-03-20T14:00:00Z",
//	 "messages": [{"role": "user", "content": "I moved to Miami last month."},
//	              {"role": "assistant", "content": "Noted!"}]}
//
// Parse accepts three layouts, told apart by the first byte that is not white
// space (a UTF-8 byte order mark is skipped) and by the content:
//
//   - '[': a JSON array of records.
//   - '{' with the first record on one line followed by a line break (or the
//     end of the input): JSON lines, one record per line. Blank lines and CRLF
//     line ends are allowed. A broken line is reported and the next line is
//     checked as usual.
//   - anything else, e.g. a pretty-printed object: a stream of JSON values
//     separated by white space, usually a single object. A value that is not
//     an object ends the reading.
//
// # Bounds
//
// Parse keeps at most Limits.MaxBytes bytes of a record: a record over the
// limit is counted to its end without being kept, then reported as "record is
// N bytes; the limit is M", and the next record is read as usual. The whole input may hold at most
// Limits.MaxRecords records and Limits.MaxTotalBytes bytes (defaults 100,000
// and 1 GiB); past either, Parse stops and reports it. Parse returns the
// records only when all of them are valid, so what it keeps in memory is
// roughly the size of the input. It stops checking after 1,000 problems.
//
// # Strictness
//
// Field names are matched exactly (encoding/json would accept "Scope" for
// "scope"); unknown and repeated fields are errors, with a suggestion for
// likely typos ("ocurred_at: unknown field (did you mean occurred_at?)").
// Optional fields (id, occurred_at, name, at) may be null. Strings must be
// JSON strings: a number is not turned into a string. Strings may not hold
// U+0000, which PostgreSQL can't store in text or jsonb. Times must be RFC 3339
// with a zone; the lower-case "t" and "z" and a space between date and time,
// all allowed by RFC 3339, are accepted.
package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The roles a message may have.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
	RoleTool      = "tool"
)

// Defaults for the zero fields of Limits, and the fixed limits.
const (
	DefaultMaxBytes      = 2 << 20 // 2 MiB
	DefaultMaxMessages   = 2000
	DefaultMaxFuture     = 24 * time.Hour
	DefaultMaxScopeLen   = 200
	DefaultMaxRecords    = 100_000
	DefaultMaxTotalBytes = 1 << 30 // 1 GiB

	// MaxIDLen and MaxNameLen bound id and messages[i].name, in characters.
	MaxIDLen   = 200
	MaxNameLen = 200
	// MinYear is the earliest year a time may have.
	MinYear = 1900
)

// Message is one turn of a conversation.
type Message struct {
	Role    string     `json:"role"`
	Name    string     `json:"name,omitempty"` // the speaker, optional
	Content string     `json:"content"`
	At      *time.Time `json:"at,omitempty"` // optional
}

// Transcript is one conversation, the unit that is enqueued.
type Transcript struct {
	Scope      string     `json:"scope"`
	ID         string     `json:"id,omitempty"`          // external id, optional
	OccurredAt *time.Time `json:"occurred_at,omitempty"` // optional; nil means "when enqueued"
	Messages   []Message  `json:"messages"`
}

// Limits bounds what Parse and Validate accept. A zero or negative field
// takes its default, so Limits{} is the same as DefaultLimits().
type Limits struct {
	MaxBytes    int           // one record's encoded size in bytes; default 2 MiB
	MaxMessages int           // messages per transcript; default 2000
	MaxFuture   time.Duration // how far after now a time may be; default 24h
	MaxScopeLen int           // scope length in characters; default 200 (the episode table's limit)
	// Parse only:
	MaxRecords    int // records per input; default 100,000
	MaxTotalBytes int // bytes per input; default 1 GiB
}

// DefaultLimits returns the limits credo uses unless configured otherwise.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:      DefaultMaxBytes,
		MaxMessages:   DefaultMaxMessages,
		MaxFuture:     DefaultMaxFuture,
		MaxScopeLen:   DefaultMaxScopeLen,
		MaxRecords:    DefaultMaxRecords,
		MaxTotalBytes: DefaultMaxTotalBytes,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	l.MaxBytes = positiveOr(l.MaxBytes, d.MaxBytes)
	l.MaxMessages = positiveOr(l.MaxMessages, d.MaxMessages)
	l.MaxFuture = positiveOr(l.MaxFuture, d.MaxFuture)
	l.MaxScopeLen = positiveOr(l.MaxScopeLen, d.MaxScopeLen)
	l.MaxRecords = positiveOr(l.MaxRecords, d.MaxRecords)
	l.MaxTotalBytes = positiveOr(l.MaxTotalBytes, d.MaxTotalBytes)
	return l
}

// positiveOr is v, or def when v is not positive.
func positiveOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

var roles = []string{RoleUser, RoleAssistant, RoleSystem, RoleTool}

func isRole(s string) bool {
	return slices.Contains(roles, s)
}

// Validate checks t field by field against the rules of the package and
// returns nil or an Errors whose entries name the field (e.g.
// "messages[2].role") and leave File, Record and Line empty. A zero now means
// time.Now().
//
// Validate sees decoded values, so it reports an empty scope or content as
// "is empty"; Parse, which sees the JSON, reports an absent one as "missing".
func (t Transcript) Validate(now time.Time, lim Limits) error {
	if errs := t.validate(now, lim); len(errs) > 0 {
		return errs
	}
	return nil
}

func (t Transcript) validate(now time.Time, lim Limits) Errors {
	lim = lim.withDefaults()
	if now.IsZero() {
		now = time.Now()
	}
	var errs Errors
	add := func(field, problem string) {
		errs = append(errs, &Error{Field: field, Problem: problem})
	}

	if p := scopeProblem(t.Scope, lim.MaxScopeLen); p != "" {
		add("scope", p)
	}
	if p := labelProblem(t.ID, MaxIDLen); p != "" {
		add("id", p)
	}
	if t.OccurredAt != nil {
		if p := timeProblem(*t.OccurredAt, now, lim.MaxFuture); p != "" {
			add("occurred_at", p)
		}
	}
	switch n := len(t.Messages); {
	case n == 0:
		add("messages", "is empty; a transcript needs at least one message")
	case n > lim.MaxMessages:
		add("messages", "has "+strconv.Itoa(n)+" messages; the limit is "+strconv.Itoa(lim.MaxMessages))
	}
	for i, m := range t.Messages {
		path := "messages[" + strconv.Itoa(i) + "]"
		if !isRole(m.Role) {
			add(path+".role", strconv.Quote(m.Role)+" is not one of "+strings.Join(roles, ", "))
		}
		if p := labelProblem(m.Name, MaxNameLen); p != "" {
			add(path+".name", p)
		}
		if p := contentProblem(m.Content); p != "" {
			add(path+".content", p)
		}
		if m.At != nil {
			if p := timeProblem(*m.At, now, lim.MaxFuture); p != "" {
				add(path+".at", p)
			}
		}
	}
	return errs
}

func scopeProblem(s string, maxLen int) string {
	if p := textProblem(s); p != "" {
		return p
	}
	if p := controlProblem(s); p != "" {
		return p
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return "has leading or trailing white space"
	}
	return lengthProblem(s, maxLen)
}

// labelProblem checks the optional short strings: id and name.
func labelProblem(s string, maxLen int) string {
	if s == "" {
		return ""
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	if p := controlProblem(s); p != "" {
		return p
	}
	return lengthProblem(s, maxLen)
}

func contentProblem(s string) string {
	if p := textProblem(s); p != "" {
		return p
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "contains U+0000, which can't be stored"
	}
	return ""
}

// textProblem is what makes s no text at all: empty, not UTF-8, or blank.
func textProblem(s string) string {
	switch {
	case s == "":
		return "is empty"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.TrimSpace(s) == "":
		return "is blank"
	}
	return ""
}

// controlProblem refuses what would make a name or a note print as something else: a
// control character, an explicit bidirectional formatting character (U+202A..U+202E,
// U+2066..U+2069: a right-to-left override shows "7 deilppa" as "applied 7", and
// reorders a table's columns) or a line or paragraph separator (U+2028, U+2029: a row
// that starts another). The bidirectional marks (U+200E, U+200F, U+061C), which
// right-to-left text needs and which reorder nothing beyond their neighbours, stay.
func controlProblem(s string) string {
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			return "contains the control character " + unicodeName(r)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return "contains the bidirectional control " + unicodeName(r)
		case r == 0x2028:
			return "contains the line separator " + unicodeName(r)
		case r == 0x2029:
			return "contains the paragraph separator " + unicodeName(r)
		}
	}
	return ""
}

func unicodeName(r rune) string {
	s := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	for len(s) < 4 {
		s = "0" + s
	}
	return "U+" + s
}

func lengthProblem(s string, maxLen int) string {
	if n := utf8.RuneCountInString(s); n > maxLen {
		return "is " + strconv.Itoa(n) + " characters long; the limit is " + strconv.Itoa(maxLen)
	}
	return ""
}

func timeProblem(t, now time.Time, maxFuture time.Duration) string {
	switch {
	case t.Year() < MinYear:
		return t.Format(time.RFC3339Nano) + " is before " + strconv.Itoa(MinYear)
	case t.After(now.Add(maxFuture)):
		return t.Format(time.RFC3339Nano) + " is in the future: more than " + shortDuration(maxFuture) +
			" after now (" + now.UTC().Format(time.RFC3339) + ")"
	}
	return ""
}

// shortDuration formats d like time.Duration.String without the zero
// minutes and seconds: 24h, not 24h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	for _, unit := range []string{"0s", "0m"} {
		if len(s) > len(unit) && strings.HasSuffix(s, unit) {
			if c := s[len(s)-len(unit)-1]; c == 'h' || c == 'm' {
				s = s[:len(s)-len(unit)]
			}
		}
	}
	return s
}

// ContentHash returns the hex SHA-256 of a canonical encoding of what the
// transcript says: occurred_at (in UTC, RFC 3339 with nanoseconds, or empty
// when nil) and each message's role, name, content and at (same format).
// Scope and ID are left out, so the same conversation enqueued twice under one
// scope is recognised whatever its external id. Times that denote the same
// instant hash the same whatever their zone.
//
// Each field is written as a netstring ("<len>:<bytes>,") after a version
// tag, so no two different transcripts share an encoding.
func (t Transcript) ContentHash() string {
	h := sha256.New()
	h.Write([]byte("credo-transcript-v1\n"))
	writeField(h, hashTime(t.OccurredAt))
	writeField(h, strconv.Itoa(len(t.Messages)))
	for _, m := range t.Messages {
		writeField(h, m.Role)
		writeField(h, m.Name)
		writeField(h, m.Content)
		writeField(h, hashTime(m.At))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func hashTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func writeField(h hash.Hash, s string) {
	h.Write([]byte(strconv.Itoa(len(s))))
	h.Write([]byte{':'})
	h.Write([]byte(s))
	h.Write([]byte{','})
}
