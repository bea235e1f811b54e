package transcript

import (
	"strings"
	"unicode"
)

// Span is a byte range [Start, End) of a text.
type Span struct{ Start, End int }

// Documents are the spans of a user message's content that the user did not say as their
// own: lines beginning with '>' (quoted), a fenced block (``` or ~~~ ... closing fence, or
// to the end when unclosed), a forwarded message (from a line such as "---------- Forwarded
// message ---------", "Begin forwarded message:", "-----Original Message-----" or
// "Forwarded message:" to the end of the content), and a pasted email (a block of at least
// two header lines among From:/To:/Sent:/Date:/Subject:/Cc: at the start of lines, blank
// lines allowed between them, from the first header line to the end of the content).
//
// Markers may be indented by spaces or tabs. A span is whole lines: it starts at the start
// of its first line and ends at the end of its last one, before the line break ("\n",
// "\r\n" or a lone "\r"); "the end of the content" is the end of its last line that is not
// blank. Spans are in order and do not overlap: spans that overlap or that only white
// space separates are one.
func Documents(content string) []Span {
	// The end of the content: of its last line that is not blank.
	end, _ := lineAt(content, len(strings.TrimRightFunc(content, unicode.IsSpace)))
	var spans []Span
	add := func(s Span) {
		// Blank lines between two documents belong to neither speaker: one document.
		if n := len(spans); n > 0 && strings.TrimSpace(content[spans[n-1].End:max(s.Start, spans[n-1].End)]) == "" {
			spans[n-1].End = max(spans[n-1].End, s.End)
			return
		}
		spans = append(spans, s)
	}
	var (
		fence      string // the opening fence of the block being read, "" outside one
		fenceStart int
		// The run of header lines being read: where it starts (-1 when none) and the
		// names it holds, one bit each.
		headerStart = -1
		headerBits  uint
	)
	for start := 0; start < end; {
		stop, next := lineAt(content, start)
		line := strings.TrimLeft(content[start:stop], " \t")
		switch {
		case fence != "":
			if closesFence(line, fence) {
				add(Span{fenceStart, stop})
				fence = ""
			}
		case openingFence(line) != "":
			fence, fenceStart = openingFence(line), start
			headerStart = -1
		case isForwardMarker(line):
			add(Span{start, end})
			return spans
		case strings.HasPrefix(line, ">"):
			add(Span{start, stop})
			headerStart = -1
		case headerName(line) != 0:
			if headerStart < 0 {
				headerStart, headerBits = start, 0
			}
			headerBits |= headerName(line)
			// Two distinct names: one "From: me" in a sentence is speech, not a header.
			if headerBits&(headerBits-1) != 0 {
				add(Span{headerStart, end})
				return spans
			}
		case strings.TrimSpace(line) == "":
			// A blank line may part header lines.
		default:
			headerStart = -1
		}
		start = next
	}
	if fence != "" {
		add(Span{fenceStart, end})
	}
	return spans
}

// lineAt is the end of the line that starts at start (before its line break) and the
// start of the next one.
func lineAt(s string, start int) (stop, next int) {
	i := strings.IndexAny(s[start:], "\r\n")
	if i < 0 {
		return len(s), len(s)
	}
	stop = start + i
	if s[stop] == '\r' && stop+1 < len(s) && s[stop+1] == '\n' {
		return stop, stop + 2
	}
	return stop, stop + 1
}

// openingFence is the fence that line (indentation removed) opens, e.g. "```", or "".
// As in CommonMark, a backtick fence's info string holds no backtick: "```x```" is code
// within a line, not a block.
func openingFence(line string) string {
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return ""
	}
	n := len(line) - len(strings.TrimLeft(line, line[:1]))
	if n < 3 || (line[0] == '`' && strings.Contains(line[n:], "`")) {
		return ""
	}
	return line[:n]
}

// closesFence reports whether line (indentation removed) closes a block opened by fence:
// the same character, at least as many times, and nothing else.
func closesFence(line, fence string) bool {
	line = strings.TrimRight(line, " \t")
	return len(line) >= len(fence) && strings.Trim(line, fence[:1]) == ""
}

// isForwardMarker reports whether line (indentation removed) begins a forwarded or
// replied-to message as mail clients write it: Gmail's "---------- Forwarded message
// ---------", Outlook's "-----Original Message-----", Apple Mail's "Begin forwarded
// message:". Without a colon, the words must stand between dashes, which speech does not
// put around them.
func isForwardMarker(line string) bool {
	line = strings.TrimRight(line, " \t")
	if len(line) > 60 {
		return false
	}
	core := strings.Trim(line, "- \t")
	dashed := strings.HasPrefix(line, "--") && strings.HasSuffix(line, "--")
	for _, m := range []string{"forwarded message", "original message"} {
		if strings.EqualFold(core, m) && dashed {
			return true
		}
	}
	for _, m := range []string{"forwarded message:", "begin forwarded message:", "original message:"} {
		if strings.EqualFold(core, m) {
			return true
		}
	}
	return false
}

// headerName is the bit of the mail header that line (indentation removed) begins with,
// e.g. "Subject:", or 0. The headers are those that mark a pasted email.
func headerName(line string) uint {
	colon := strings.IndexByte(line, ':')
	if colon < 2 || colon > len("subject") {
		return 0
	}
	for i, h := range [...]string{"from", "to", "sent", "date", "subject", "cc"} {
		if strings.EqualFold(line[:colon], h) {
			return 1 << i
		}
	}
	return 0
}
