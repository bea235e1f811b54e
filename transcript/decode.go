package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

var (
	transcriptFields = []string{"scope", "id", "occurred_at", "messages"}
	messageFields    = []string{"role", "name", "content", "at"}

	// Names people use for the fields, for "did you mean".
	transcriptAliases = map[string]string{
		"user": "scope", "user_id": "scope", "namespace": "scope", "tenant": "scope",
		"external_id": "id", "conversation_id": "id", "conv_id": "id", "session_id": "id",
		"time": "occurred_at", "timestamp": "occurred_at", "date": "occurred_at",
		"created_at": "occurred_at", "started_at": "occurred_at", "occured_at": "occurred_at",
		"turns": "messages", "conversation": "messages", "history": "messages", "msgs": "messages",
	}
	messageAliases = map[string]string{
		"text": "content", "body": "content", "message": "content",
		"speaker": "name", "author": "name", "sender": "name", "username": "name",
		"time": "at", "timestamp": "at", "ts": "at", "created_at": "at", "date": "at",
		"type": "role", "from": "role",
	}
)

// recordDecoder decodes and checks one record. Its errors carry Field,
// Problem and Line (absolute); the caller fills in File and Record.
type recordDecoder struct {
	raw   []byte
	line  int // where raw starts
	errs  Errors
	fatal map[string]bool // fields whose value could not be decoded
}

func (d *recordDecoder) add(field, problem string) {
	d.errs = append(d.errs, &Error{Line: d.line, Field: field, Problem: problem})
}

func (d *recordDecoder) fail(field, problem string) {
	d.add(field, problem)
	if d.fatal == nil {
		d.fatal = map[string]bool{}
	}
	d.fatal[field] = true
}

// lineAt is the line of raw[off].
func (d *recordDecoder) lineAt(off int) int {
	off = min(max(off, 0), len(d.raw))
	return d.line + bytes.Count(d.raw[:off], []byte{'\n'})
}

// decodeRecord decodes raw, one record starting on line line, and checks it
// with Validate.
func decodeRecord(raw []byte, line int, now time.Time, lim Limits) (t Transcript, errs Errors) {
	d := &recordDecoder{raw: raw, line: line}

	if !utf8.Valid(raw) {
		off := invalidUTF8(raw)
		return t, Errors{{Line: d.lineAt(off), Problem: "invalid UTF-8: byte 0x" +
			strconv.FormatUint(uint64(raw[off]), 16) + " at offset " + strconv.Itoa(off) + " of the record"}}
	}

	dec := json.NewDecoder(bytes.NewReader(raw))
	var top json.RawMessage
	if err := dec.Decode(&top); err != nil {
		e := &Error{Line: d.lineAt(len(raw)), Problem: "invalid JSON: unexpected end of input"}
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			e.Line = d.lineAt(int(se.Offset) - 1)
			e.Problem = "invalid JSON: " + se.Error()
		} else if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			e.Problem = "invalid JSON: " + err.Error()
		}
		return t, Errors{e}
	}
	off := int(dec.InputOffset())
	for off < len(raw) && isSpace(raw[off]) {
		off++
	}
	if off < len(raw) {
		r, _ := utf8.DecodeRune(raw[off:])
		return t, Errors{{Line: d.lineAt(off), Problem: "invalid JSON: unexpected " +
			strconv.QuoteRune(r) + " after the end of the record"}}
	}
	if top[0] != '{' {
		return t, Errors{{Line: line, Problem: "must be a JSON object, not " + kindOf(top)}}
	}

	f := d.object(top, "", transcriptFields, transcriptAliases)
	if v, ok := f["scope"]; ok {
		t.Scope = d.str(v, "scope", false)
	} else {
		d.fail("scope", "missing")
	}
	if v, ok := f["id"]; ok {
		t.ID = d.str(v, "id", true)
	}
	if v, ok := f["occurred_at"]; ok {
		t.OccurredAt = d.time(v, "occurred_at")
	}
	if v, ok := f["messages"]; ok {
		t.Messages = d.messages(v)
	} else {
		d.fail("messages", "missing")
	}

	// Validate's view, less what decoding already reported.
	for _, e := range t.validate(now, lim) {
		if !d.covered(e.Field) {
			e.Line = line
			d.errs = append(d.errs, e)
		}
	}
	slices.SortStableFunc(d.errs, func(a, b *Error) int { return cmpOrder(fieldOrder(a.Field), fieldOrder(b.Field)) })
	return t, d.errs
}

// fieldOrder sorts problems by field in the order of the documentation,
// unknown fields after known ones, problems with the record first.
func fieldOrder(field string) [3]int {
	if field == "" {
		return [3]int{-1}
	}
	end := strings.IndexAny(field, ".[")
	if end < 0 {
		end = len(field)
	}
	key := [3]int{rank(transcriptFields, field[:end]), -1, -1}
	rest := field[end:]
	if !strings.HasPrefix(rest, "[") {
		return key
	}
	closing := strings.IndexByte(rest, ']')
	if closing < 0 {
		return key
	}
	key[1], _ = strconv.Atoi(rest[1:closing])
	if sub, ok := strings.CutPrefix(rest[closing+1:], "."); ok {
		key[2] = rank(messageFields, sub)
	}
	return key
}

func rank(list []string, s string) int {
	if i := slices.Index(list, s); i >= 0 {
		return i
	}
	return len(list)
}

// covered tells whether field or a field it is part of was reported as
// undecodable.
func (d *recordDecoder) covered(field string) bool {
	for f := range d.fatal {
		if field == f || strings.HasPrefix(field, f+".") || strings.HasPrefix(field, f+"[") {
			return true
		}
	}
	return false
}

func (d *recordDecoder) messages(raw json.RawMessage) []Message {
	if raw[0] != '[' {
		d.fail("messages", "must be an array of messages, not "+kindOf(raw))
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil { // can't happen: raw is valid JSON
		d.fail("messages", "invalid JSON: "+err.Error())
		return nil
	}
	msgs := make([]Message, len(items))
	for i, item := range items {
		path := "messages[" + strconv.Itoa(i) + "]"
		if item[0] != '{' {
			d.fail(path, "must be a JSON object, not "+kindOf(item))
			continue
		}
		m := &msgs[i]
		f := d.object(item, path, messageFields, messageAliases)
		if v, ok := f["role"]; ok {
			m.Role = d.str(v, path+".role", false)
		} else {
			d.fail(path+".role", "missing")
		}
		if v, ok := f["name"]; ok {
			m.Name = d.str(v, path+".name", true)
		}
		if v, ok := f["content"]; ok {
			m.Content = d.str(v, path+".content", false)
		} else {
			d.fail(path+".content", "missing")
		}
		if v, ok := f["at"]; ok {
			m.At = d.time(v, path+".at")
		}
	}
	return msgs
}

// object returns the members of the JSON object raw whose names are in
// known, reporting the others and repeated ones. Names are matched exactly.
func (d *recordDecoder) object(raw json.RawMessage, path string, known []string, aliases map[string]string) map[string]json.RawMessage {
	members := map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // the '{'
		d.fail(path, "invalid JSON: "+err.Error())
		return members
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			d.fail(path, "invalid JSON: "+err.Error())
			return members
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			d.fail(path, "invalid JSON: "+err.Error())
			return members
		}
		field := joinPath(path, name)
		switch {
		case !slices.Contains(known, name):
			d.add(field, unknownField(name, known, aliases))
		case members[name] != nil:
			d.add(field, "appears more than once")
		default:
			members[name] = v
		}
	}
	return members
}

func joinPath(path, name string) string {
	if !isIdentifier(name) {
		name = strconv.Quote(name)
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if c != '_' && c != '-' && ('0' > c || c > '9') && ('a' > c || c > 'z') && ('A' > c || c > 'Z') {
			return false
		}
	}
	return true
}

func unknownField(name string, known []string, aliases map[string]string) string {
	lower := strings.ToLower(name)
	guess := aliases[lower]
	if guess == "" {
		best := 0
		for _, k := range known {
			// Suggest only within two edits, one for short names.
			limit := 1
			if len(lower) >= 5 && len(k) >= 5 {
				limit = 2
			}
			if dist := EditDistance(lower, k, limit); dist <= limit && (guess == "" || dist < best) {
				best, guess = dist, k
			}
		}
	}
	if guess != "" {
		return "unknown field (did you mean " + guess + "?)"
	}
	return "unknown field; the fields are " + strings.Join(known, ", ")
}

// str decodes a JSON string; null is "" when optional.
func (d *recordDecoder) str(raw json.RawMessage, field string, optional bool) string {
	if optional && raw[0] == 'n' {
		return ""
	}
	if raw[0] != '"' {
		d.fail(field, "must be a string, not "+kindOf(raw))
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil { // can't happen: raw is a valid string
		d.fail(field, "invalid JSON: "+err.Error())
	}
	return s
}

// time decodes an optional RFC 3339 time; null is nil.
func (d *recordDecoder) time(raw json.RawMessage, field string) *time.Time {
	if raw[0] == 'n' {
		return nil
	}
	if raw[0] != '"' {
		d.fail(field, "must be an RFC 3339 time in a string, not "+kindOf(raw))
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		d.fail(field, "invalid JSON: "+err.Error())
		return nil
	}
	t, problem := parseTime(s)
	if problem != "" {
		d.fail(field, problem)
		return nil
	}
	return &t
}

// parseTime parses an RFC 3339 time, which must have a zone.
func parseTime(s string) (time.Time, string) {
	norm := s
	if len(norm) > 10 && (norm[10] == 't' || norm[10] == ' ') {
		norm = norm[:10] + "T" + norm[11:]
	}
	if strings.HasSuffix(norm, "z") {
		norm = norm[:len(norm)-1] + "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, norm)
	if err == nil {
		return t, ""
	}
	if _, err := time.Parse("2006-01-02T15:04:05.999999999", norm); err == nil {
		return time.Time{}, strconv.Quote(s) + " has no time zone; add Z for UTC or an offset such as +02:00"
	}
	var pe *time.ParseError
	if errors.As(err, &pe) && pe.Message != "" {
		return time.Time{}, strconv.Quote(s) + " is not an RFC 3339 time: " + strings.TrimPrefix(pe.Message, ": ")
	}
	return time.Time{}, strconv.Quote(s) + " is not an RFC 3339 time; expected a date, time and zone such as 2026-03-20T14:00:00Z"
}

// kindOf names the type of a valid JSON value.
func kindOf(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// invalidUTF8 returns the offset of the first byte of b that is not part of
// valid UTF-8.
func invalidUTF8(b []byte) int {
	for off := 0; off < len(b); {
		r, size := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && size <= 1 {
			return off
		}
		off += size
	}
	return len(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func cmpOrder(a, b [3]int) int { return slices.Compare(a[:], b[:]) }
