package transcript

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Locate finds quote in text, as a model copies a span of it: case, white space,
// punctuation and typographic quotes, apostrophes and dashes do not matter, nor a leading
// or trailing ellipsis; an ellipsis ("..." or "…") inside the quote may skip text between
// its parts, which must appear in order, each as consecutive words of text. Words
// themselves must match, letter for letter apart from case (accents are letters). It
// returns the span of text from the first word matched to the last, and false when the
// quote is not there (an invented or paraphrased quote) or has no words.
//
// A word is a run of letters, digits and marks; an apostrophe inside one does not cut it,
// so "don't" matches "dont" and "don’t". In scripts written without spaces (Chinese,
// Japanese kana, Thai, ...) each character is a word, so that a quote may start and end
// anywhere in a run of them. When the quote is in text more than once, the span is of the
// first match.
func Locate(text, quote string) (Span, bool) {
	// The quote's words, part after part, and where each part ends among them.
	var qw []Span
	var parts []int
	for part := range ellipsisParts(quote) {
		n := len(qw)
		for w, ok := nextWord(quote[:part.End], part.Start); ok; w, ok = nextWord(quote[:part.End], w.End) {
			qw = append(qw, w)
		}
		if len(qw) > n {
			parts = append(parts, len(qw))
		}
	}
	if len(qw) == 0 {
		return Span{}, false
	}
	// The text is read word by word rather than cut into a list first: a long transcript
	// costs no memory, and the first word of a part is enough to pass most of its words.
	var match Span
	from := 0 // the part's first word in qw
	for i, to := range parts {
		m, ok := find(text, match.End, quote, qw[from:to])
		if !ok {
			return Span{}, false
		}
		if i == 0 {
			match.Start = m.Start
		}
		match.End, from = m.End, to
	}
	return match, true
}

// find is the span of the first run of words of text, from byte at on, that are the
// words qw of quote.
func find(text string, at int, quote string, qw []Span) (Span, bool) {
	for {
		first, ok := nextWord(text, at)
		if !ok {
			return Span{}, false
		}
		at = first.End
		w, j := first, 0
		for sameWord(text[w.Start:w.End], quote[qw[j].Start:qw[j].End]) {
			if j++; j == len(qw) {
				return Span{first.Start, w.End}, true
			}
			if w, ok = nextWord(text, w.End); !ok {
				return Span{}, false // the text ends before the quote could
			}
		}
	}
}

// ellipsisParts yields the spans of quote between its ellipses: "…", or three dots or more.
func ellipsisParts(quote string) iter.Seq[Span] {
	return func(yield func(Span) bool) {
		start := 0
		for i := 0; i < len(quote); {
			n := 0
			switch {
			case strings.HasPrefix(quote[i:], "…"):
				n = len("…")
			case strings.HasPrefix(quote[i:], "..."):
				n = len(quote[i:]) - len(strings.TrimLeft(quote[i:], "."))
			}
			if n == 0 {
				i++
				continue
			}
			if !yield(Span{start, i}) {
				return
			}
			i += n
			start = i
		}
		yield(Span{start, len(quote)})
	}
}

// nextWord is the first word of s from byte i on.
func nextWord(s string, i int) (Span, bool) {
	start := -1   // the start of the word, -1 before it
	solo := false // the word is a character of a script without spaces
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= 0x300 && unicode.IsMark(r) && start >= 0:
			// An accent or vowel sign belongs to the letter before it.
		case isLetter(r):
			if start >= 0 && (solo || spaceless(r)) {
				return Span{start, i}, true
			}
			if start < 0 {
				start = i
			}
			solo = spaceless(r)
		case start >= 0 && isApostrophe(r) && !solo:
			// Within a word ("don't") an apostrophe does not cut it.
			if next, _ := utf8.DecodeRuneInString(s[i+size:]); !isLetter(next) || spaceless(next) {
				return Span{start, i}, true
			}
		default:
			if start >= 0 {
				return Span{start, i}, true
			}
		}
		i += size
	}
	return Span{start, len(s)}, start >= 0
}

// sameWord reports whether two words are the same but for case and apostrophes.
func sameWord(a, b string) bool {
	for {
		a = strings.TrimLeftFunc(a, isApostrophe)
		b = strings.TrimLeftFunc(b, isApostrophe)
		if a == "" || b == "" {
			return a == b
		}
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb && fold(ra) != fold(rb) {
			return false
		}
		a, b = a[na:], b[nb:]
	}
}

// fold is r in the case words are compared in; through upper case, so that σ and ς are
// the same letter.
func fold(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// isLetter reports whether r starts or continues a word.
func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r|0x20 && r|0x20 <= 'z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isApostrophe reports whether r is an apostrophe, straight or typographic.
func isApostrophe(r rune) bool { return r == '\'' || r == '’' || r == 'ʼ' || r == '‘' }

// spaceless reports whether r is of a script written without spaces between words.
func spaceless(r rune) bool {
	return r >= 0x0E00 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao,
		unicode.Khmer, unicode.Myanmar)
}
