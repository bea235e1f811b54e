package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"time"
)

// StdinName is the file name errors give an input Parse was told is "-".
const StdinName = "<stdin>"

// maxProblems is where Parse stops checking.
const maxProblems = 1000

// maxDepth bounds the nesting of arrays and objects, as encoding/json does.
const maxDepth = 10000

// Parse reads every record of one input (a JSON object, a JSON array of
// objects, or JSON lines; see the package documentation), decodes it and
// checks it with Validate. It returns all the records, in input order, or nil
// and an Errors listing every problem found. name is the file name used in
// the errors: "-" becomes StdinName, "" leaves it out. now is the time
// against which times in the future are judged; zero means time.Now().
// lim's zero fields take their defaults.
//
// An input without records is an error ("no records"). A read error of r is
// reported as an *Error that unwraps to it.
func Parse(name string, r io.Reader, now time.Time, lim Limits) ([]Transcript, error) {
	if name == "-" {
		name = StdinName
	}
	if now.IsZero() {
		now = time.Now()
	}
	lim = lim.withDefaults()
	p := &parser{
		file: name,
		now:  now,
		lim:  lim,
		in:   &input{br: bufio.NewReaderSize(r, 64<<10), line: 1, max: lim.MaxTotalBytes},
	}
	p.run()
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	if len(p.records) == 0 {
		return nil, Errors{{File: name, Problem: "no records"}}
	}
	return p.records, nil
}

type parser struct {
	file    string
	now     time.Time
	lim     Limits
	in      *input
	record  int // number of the current record
	records []Transcript
	errs    Errors
	stopped bool
}

func (p *parser) run() {
	p.in.skipBOM()
	c, err := p.in.skipSpace()
	if err != nil {
		p.inputError(err)
		return
	}
	if c == '[' {
		p.array()
	} else {
		p.stream()
	}
}

// stream reads JSON values separated by white space, and switches to JSON
// lines when the first value, an object, fills its line.
func (p *parser) stream() {
	for first := true; !p.stopped; first = false {
		c, err := p.in.skipSpace()
		if err != nil {
			p.inputError(err)
			return
		}
		line, ok := p.value()
		if !ok {
			return
		}
		if c != '{' {
			// Not a sequence of objects: the rest is unlikely to make sense.
			return
		}
		if first && p.in.line == line {
			blank, err := p.in.restOfLineBlank()
			if err != nil {
				p.inputError(err)
				return
			}
			if blank {
				p.lines()
				return
			}
		}
	}
}

// inArray skips white space inside an array and returns the byte after it; false when
// the input ends (or fails) before the array is closed.
func (p *parser) inArray() (byte, bool) {
	c, err := p.in.skipSpace()
	if err != nil {
		p.unclosed(err)
		return 0, false
	}
	return c, true
}

// value reads the JSON value at the input's position, a record, and checks it; it
// returns the line the record starts on, and false when parsing stops.
func (p *parser) value() (line int, ok bool) {
	line = p.in.line
	if !p.next(line) {
		return line, false
	}
	raw, size, err := p.in.readValue(p.lim.MaxBytes)
	if err != nil {
		p.inputError(err)
		return line, false
	}
	p.check(raw, size, line)
	return line, true
}

// lines reads the rest of the input as JSON lines.
func (p *parser) lines() {
	for !p.stopped {
		buf, size, line, err := p.in.readLine(p.lim.MaxBytes)
		if err != nil {
			p.inputError(err)
			return
		}
		rec := bytes.Trim(buf, " \t\r\n")
		if buf != nil || size <= p.lim.MaxBytes { // else over the limit
			if len(rec) == 0 {
				continue
			}
			size = len(rec)
		}
		if !p.next(line) {
			return
		}
		p.check(rec, size, line)
	}
}

// array reads a JSON array of records; the input is at its '['.
func (p *parser) array() {
	p.in.discard(1)
	c, ok := p.inArray()
	if !ok {
		return
	}
	if c == ']' {
		p.in.discard(1)
		p.afterArray()
		return
	}
	for !p.stopped {
		if _, ok := p.value(); !ok {
			return
		}
		c, ok := p.inArray()
		if !ok {
			return
		}
		switch c {
		case ']':
			p.in.discard(1)
			p.afterArray()
			return
		case ',':
			p.in.discard(1)
			c, ok := p.inArray()
			if !ok {
				return
			}
			if c == ']' {
				p.fileProblem(p.in.line, "invalid JSON: \",\" before the closing \"]\"")
				return
			}
		default:
			p.fileProblem(p.in.line, "invalid JSON: expected \",\" or \"]\" after record "+
				strconv.Itoa(p.record)+", found "+quoteByte(c))
			return
		}
	}
}

func (p *parser) unclosed(err error) {
	if errors.Is(err, io.EOF) {
		p.fileProblem(p.in.line, "invalid JSON: unexpected end of input; the array is not closed")
		return
	}
	p.inputError(err)
}

func (p *parser) afterArray() {
	c, err := p.in.skipSpace()
	switch {
	case errors.Is(err, io.EOF):
	case err != nil:
		p.inputError(err)
	default:
		p.fileProblem(p.in.line, "invalid JSON: unexpected "+quoteByte(c)+" after the closing \"]\"")
	}
}

// next starts a record on line line, unless there are too many.
func (p *parser) next(line int) bool {
	if p.record >= p.lim.MaxRecords {
		p.fileProblem(line, "more than "+strconv.Itoa(p.lim.MaxRecords)+
			" records; split the input into smaller files")
		return false
	}
	p.record++
	return true
}

// check decodes and validates the current record, raw, which is size bytes
// long (raw is nil when that is over MaxBytes) and starts on line line.
func (p *parser) check(raw []byte, size, line int) {
	if size > p.lim.MaxBytes {
		p.add(&Error{Line: line, Problem: "record is " + strconv.Itoa(size) +
			" bytes; the limit is " + strconv.Itoa(p.lim.MaxBytes)})
		return
	}
	t, errs := decodeRecord(raw, line, p.now, p.lim)
	for _, e := range errs {
		p.add(e)
	}
	if len(errs) == 0 && len(p.errs) == 0 {
		p.records = append(p.records, t)
	}
}

// add records a problem with the current record.
func (p *parser) add(e *Error) {
	if p.stopped {
		return
	}
	e.File, e.Record = p.file, p.record
	p.errs = append(p.errs, e)
	p.records = nil // no use for them now
	if len(p.errs) >= maxProblems {
		p.errs = append(p.errs, &Error{File: p.file, Problem: "too many problems; stopped checking at record " +
			strconv.Itoa(p.record)})
		p.stopped = true
	}
}

// fileProblem records a problem with the input as a whole, at a line.
func (p *parser) fileProblem(line int, problem string) {
	if p.stopped {
		return
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Problem: problem})
	p.stopped = true
}

// inputError reports an error of input's methods; io.EOF is none.
func (p *parser) inputError(err error) {
	var se *syntaxError
	switch {
	case errors.Is(err, io.EOF):
	case errors.Is(err, errTooBig):
		p.fileProblem(p.in.line, "input is more than "+strconv.Itoa(p.lim.MaxTotalBytes)+
			" bytes; split it into smaller files")
	case errors.As(err, &se):
		p.add(&Error{Line: se.line, Problem: "invalid JSON: " + se.msg})
		p.stopped = true
	default:
		if !p.stopped {
			p.errs = append(p.errs, &Error{File: p.file, Line: p.in.line, Problem: "read error: " + err.Error(), err: err})
			p.stopped = true
		}
	}
}

func quoteByte(c byte) string {
	if c < 0x80 {
		return strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

var errTooBig = errors.New("input too big")

// syntaxError is a JSON syntax error that makes the bounds of a record
// unknown, so reading can't go on.
type syntaxError struct {
	line int
	msg  string
}

func (e *syntaxError) Error() string { return e.msg }

// input reads bytes, counting lines, and stops at max bytes.
type input struct {
	br   *bufio.Reader
	line int // the line of the next byte
	n    int // bytes read
	max  int
}

// buffered returns the buffered bytes, reading more when there are none. Its
// error is io.EOF at the end of the input.
func (in *input) buffered() ([]byte, error) {
	if in.br.Buffered() == 0 {
		if _, err := in.br.Peek(1); err != nil {
			return nil, err
		}
	}
	b, _ := in.br.Peek(in.br.Buffered())
	return b, nil
}

// advance consumes b, which buffered returned.
func (in *input) advance(b []byte) error {
	in.line += bytes.Count(b, []byte{'\n'})
	in.discard(len(b))
	if in.n > in.max {
		return errTooBig
	}
	return nil
}

func (in *input) discard(n int) {
	in.br.Discard(n)
	in.n += n
}

func (in *input) skipBOM() {
	if b, err := in.br.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
		in.discard(3)
	}
}

// skipSpace consumes white space and returns the next byte, unread.
func (in *input) skipSpace() (byte, error) {
	for {
		b, err := in.buffered()
		if err != nil {
			return 0, err
		}
		i := 0
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i < len(b) {
			c := b[i]
			return c, in.advance(b[:i])
		}
		if err := in.advance(b); err != nil {
			return 0, err
		}
	}
}

// restOfLineBlank consumes spaces, tabs and CRs and tells whether a line
// feed or the end of the input follows.
func (in *input) restOfLineBlank() (bool, error) {
	for {
		b, err := in.buffered()
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		i := 0
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
			i++
		}
		if i < len(b) {
			c := b[i]
			return c == '\n', in.advance(b[:i])
		}
		if err := in.advance(b); err != nil {
			return false, err
		}
	}
}

// readLine reads the next line and returns it (nil when it is longer than
// max), its size without the line end, and its number. At the end of the
// input its error is io.EOF.
func (in *input) readLine(limit int) (buf []byte, size, line int, err error) {
	line = in.line
	var prev byte // the last byte of the previous segment
	for {
		seg, err := in.br.ReadSlice('\n')
		in.n += len(seg)
		size += len(seg)
		if size <= limit+2 { // room for "\r\n"
			buf = grow(buf, seg, limit+2)
		} else {
			buf = nil // too big: only counted from now on
		}
		switch {
		case in.n > in.max:
			return nil, 0, line, errTooBig
		case err == nil:
			in.line++
			size-- // the '\n'
			if len(seg) >= 2 && seg[len(seg)-2] == '\r' || len(seg) == 1 && prev == '\r' {
				size--
			}
			return buf, size, line, nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF) && size > 0:
			return buf, size, line, nil
		default:
			return nil, 0, line, err
		}
		if len(seg) > 0 {
			prev = seg[len(seg)-1]
		}
	}
}

// readValue reads one JSON value, which must not start with white space,
// and returns it (nil when it is longer than max) and its size. It finds the end of the
// value by following strings and brackets, and leaves the rest of the syntax
// to encoding/json; errors are for brackets that don't match, which make the
// end of the value unknown.
func (in *input) readValue(limit int) (raw []byte, size int, err error) {
	s := valueScanner{first: true}
	// blankLines counts the line feeds after the value's last byte that is not white
	// space: an input that ends inside the value ends on that byte's line, since a
	// final newline starts no line of its own.
	blankLines := 0
	for {
		b, err := in.buffered()
		if errors.Is(err, io.EOF) {
			if s.scalar {
				return raw, size, nil
			}
			return raw, size, &syntaxError{in.line - blankLines, "unexpected end of input"}
		}
		if err != nil {
			return nil, 0, err
		}
		i, done, problem := s.scan(b)
		if problem != "" {
			if err := in.advance(b[:i]); err != nil {
				return nil, 0, err
			}
			return nil, 0, &syntaxError{in.line, problem}
		}
		size += i
		if size <= limit {
			raw = grow(raw, b[:i], limit)
		} else {
			raw = nil // too big: only counted from now on
		}
		blankLines = trailingLineFeeds(b[:i], blankLines)
		if err := in.advance(b[:i]); err != nil {
			return nil, 0, err
		}
		if done {
			return raw, size, nil
		}
	}
}

// trailingLineFeeds is the number of line feeds in the white space that ends b, plus
// before when b is all white space.
func trailingLineFeeds(b []byte, before int) int {
	n := 0
	for _, c := range slices.Backward(b) {
		switch {
		case c == '\n':
			n++
		case !isSpace(c):
			return n
		}
	}
	return before + n
}

// valueScanner follows one JSON value through the buffers it spans.
type valueScanner struct {
	stack                            []byte // the closing brackets expected
	first, inString, escaped, scalar bool
}

// scan reads b until the value ends (done) or b does, and returns how much of b belongs
// to the value. A problem is a bracket that does not match, at b[i].
func (s *valueScanner) scan(b []byte) (i int, done bool, problem string) {
	quote, backslash := -1, -1 // next '"' and '\\' at or after i, len(b) for none
	for i < len(b) && !done {
		c := b[i]
		switch {
		case s.escaped:
			s.escaped = false
			i++
		case s.inString:
			if quote < i {
				quote = indexFrom(b, i, len(b), '"')
			}
			if backslash < i {
				backslash = indexFrom(b, i, quote, '\\')
			}
			i = min(quote, backslash)
			if i == len(b) {
				break
			}
			if b[i] == '\\' {
				s.escaped = true
			} else {
				s.inString = false
				done = len(s.stack) == 0
			}
			i++
		case s.scalar:
			if isSpace(c) || c == ',' || c == ']' || c == '}' || c == '[' || c == '{' || c == '"' {
				done = true
			} else {
				i++
			}
		case s.first:
			s.first = false
			switch c {
			case '{', '[':
				s.stack = append(s.stack, c+2) // '{'+2 == '}', '['+2 == ']'
			case '"':
				s.inString = true
			case ']', '}', ',', ':':
				return i, false, "unexpected " + quoteByte(c)
			default:
				s.scalar = true
			}
			i++
		default:
			if problem := s.bracket(c); problem != "" {
				return i, false, problem
			}
			done = len(s.stack) == 0
			i++
		}
	}
	return i, done, ""
}

// bracket follows c, a byte inside an array or object and outside its strings.
func (s *valueScanner) bracket(c byte) (problem string) {
	switch c {
	case '"':
		s.inString = true
	case '{', '[':
		if len(s.stack) == maxDepth {
			return "nested too deeply"
		}
		s.stack = append(s.stack, c+2)
	case '}', ']':
		if want := s.stack[len(s.stack)-1]; c != want {
			return "unexpected " + quoteByte(c) + ", expected " + quoteByte(want)
		}
		s.stack = s.stack[:len(s.stack)-1]
	}
	return ""
}

// grow appends b to buf, which never needs more than max bytes, doubling
// its capacity when it must grow: append grows large slices by a quarter,
// which allocates five times the final size on the way to 2 MiB.
func grow(buf, b []byte, limit int) []byte {
	if n := len(buf) + len(b); n > cap(buf) {
		next := make([]byte, len(buf), min(2*n, limit))
		copy(next, buf)
		buf = next
	}
	return append(buf, b...)
}

// indexFrom returns the index of the first c in b[from:to], or len(b).
func indexFrom(b []byte, from, to int, c byte) int {
	if k := bytes.IndexByte(b[from:to], c); k >= 0 {
		return from + k
	}
	if to == len(b) {
		return len(b)
	}
	return to // none before to; to itself is the next '"' (or len(b))
}
