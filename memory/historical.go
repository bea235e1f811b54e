package memory

import (
	"slices"
	"strings"
	"unicode"
)

// historicalMarkers are the words and phrases that make a question about the past. Words
// that are as often about the present ("old", "first", "last", "was") are left out: a
// wrong switch to history costs an agent little, but a question that says "used to"
// must see what used to be.
func historicalMarkers() []string {
	return []string{
		"used to", "use to", "before", "originally", "original", "previously", "previous",
		"back when", "back then", "still", "formerly", "former", "ex", "at first", "initially",
		"anymore", "any more", "no longer", "earlier", "in the past", "past", "prior",
		"history", "historically", "ago", "changed", "moved from", "since when",
	}
}

// IsHistorical reports whether question reads as being about the past, as in "Where did
// the user live before the move?" or "Does she still work at Acme?". Markers match whole
// words only: "beforehand" and "pastries" are not historical.
func IsHistorical(question string) bool {
	words := strings.FieldsFunc(strings.ToLower(question), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	})
	for i, w := range words {
		words[i] = strings.Trim(w, "'’") // quoted words: 'still'
	}
	for _, marker := range historicalMarkers() {
		phrase := strings.Fields(marker)
		for i := 0; i+len(phrase) <= len(words); i++ {
			if slices.Equal(words[i:i+len(phrase)], phrase) {
				return true
			}
		}
	}
	return false
}
