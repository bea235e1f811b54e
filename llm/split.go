package llm

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// SplitText cuts text into consecutive pieces whose estimate (t.High) is at most
// maxTokens each, and which joined give text back: at line breaks where it can, else
// between words, else between characters. A text that fits is one piece.
func SplitText(text string, maxTokens int, t *Tokens) []string {
	maxTokens = max(maxTokens, 1)
	if t.High(text) <= maxTokens {
		return []string{text}
	}
	// Lines first, keeping each break with the line it ends.
	var pieces []string
	for _, unit := range splitAfterAny(text, "\n") {
		if t.High(unit) <= maxTokens {
			pieces = append(pieces, unit)
			continue
		}
		for _, word := range splitAfterAny(unit, " \t") {
			if t.High(word) <= maxTokens {
				pieces = append(pieces, word)
				continue
			}
			pieces = append(pieces, splitRunes(word, maxTokens, t)...)
		}
	}
	return pack(pieces, maxTokens, t)
}

// splitAfterAny cuts s after every rune of seps, each cut keeping its separator.
func splitAfterAny(s, seps string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, seps)
		if i < 0 {
			out = append(out, s)
			break
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		out = append(out, s[:i+n])
		s = s[i+n:]
	}
	return out
}

// splitRunes cuts a word no break divides into pieces of at most maxTokens (at least
// one character each).
func splitRunes(word string, maxTokens int, t *Tokens) []string {
	var out []string
	for word != "" {
		// ends[i] is where the word's i+1-th character ends; find the most that fit.
		ends := make([]int, 0, utf8.RuneCountInString(word))
		for i, r := range word {
			ends = append(ends, i+utf8.RuneLen(r))
		}
		n := sort.Search(len(ends), func(i int) bool { return t.High(word[:ends[i]]) > maxTokens })
		cut := ends[max(n-1, 0)]
		out = append(out, word[:cut])
		word = word[cut:]
	}
	return out
}

// pack joins consecutive pieces into as few as fit maxTokens each. It adds the pieces'
// estimates rather than estimating each join: a tokenizer counts a join no higher than
// its parts, and a long text would otherwise be counted again at every piece.
func pack(pieces []string, maxTokens int, t *Tokens) []string {
	var out []string
	var cur strings.Builder
	sum := 0
	for _, p := range pieces {
		n := t.High(p)
		if cur.Len() > 0 && sum+n > maxTokens {
			out = append(out, cur.String())
			cur.Reset()
			sum = 0
		}
		cur.WriteString(p)
		sum += n
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
