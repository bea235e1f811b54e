package entity

import (
	"slices"
	"strings"
)

// Known is one entity of a registry as Proposals reads it.
type Known struct {
	Key     string
	Name    string
	Kind    Kind
	Aliases []string // keys
}

// Proposal is two entities that may be one: an operator merges Other into Into, or
// dismisses it. Never applied without that decision.
type Proposal struct {
	Into, Other string // keys
	Why         string
}

// Proposals finds the pairs of entities among known that may be one, by names alone and
// without guessing from similarity: the same relation in other words ("mom" and
// "mother"), or a person's first or last name and their full name ("Sarah" and "Sarah
// Connor", "Mr. Holmes" and "Sherlock Holmes"). Into is the fuller name. Pairs are
// given once, in a stable order; the user is never proposed.
func Proposals(known []Known) []Proposal {
	var out []Proposal
	seen := map[[2]string]bool{}
	add := func(into, other, why string) {
		pair := [2]string{min(into, other), max(into, other)}
		if !seen[pair] {
			seen[pair] = true
			out = append(out, Proposal{Into: into, Other: other, Why: why})
		}
	}
	sorted := slices.Clone(known)
	slices.SortFunc(sorted, func(a, b Known) int { return strings.Compare(a.Key, b.Key) })
	for i, a := range sorted {
		for _, b := range sorted[i+1:] {
			if a.Key == User || b.Key == User || !mayBePeople(a.Kind, b.Kind) {
				continue
			}
			if canonicalRelation(a.Key) == canonicalRelation(b.Key) {
				add(a.Key, b.Key, "the same relation in other words: "+a.Name+", "+b.Name)
				continue
			}
			if short, full, ok := partOfName(a, b); ok {
				add(full.Key, short.Key, short.Name+" may be short for "+full.Name)
			}
		}
	}
	return out
}

// mayBePeople says whether entities of kinds a and b may be one person or thing: the
// same kind, or one not known yet.
func mayBePeople(a, b Kind) bool {
	return a == b || a == KindOther || b == KindOther
}

// relationSynonyms map a word of kinship to the one word it is said in here.
var relationSynonyms = map[string]string{
	"mom": "mother", "mum": "mother", "mommy": "mother", "mummy": "mother", "mama": "mother", "ma": "mother",
	"dad": "father", "daddy": "father", "papa": "father", "pa": "father",
	"grandma": "grandmother", "granny": "grandmother", "grandpa": "grandfather",
	"sis": "sister", "bro": "brother", "kid": "child", "hubby": "husband",
}

// canonicalRelation is key with a kinship word said the one way; key itself when it has
// none (then only an equal key matches, and keys are unique).
func canonicalRelation(key string) string {
	words := strings.Fields(key)
	for i, w := range words {
		if c, ok := relationSynonyms[w]; ok {
			words[i] = c
		}
	}
	return strings.Join(words, " ")
}

// titles are words before a person's name that are not part of it.
var titles = map[string]bool{"mr": true, "mrs": true, "ms": true, "miss": true, "dr": true, "prof": true, "mx": true}

// nameWords are the words of a person's name key, without a title.
func nameWords(key string) []string {
	words := strings.FieldsFunc(key, func(r rune) bool { return r == ' ' || r == '.' })
	if len(words) > 1 && titles[words[0]] {
		words = words[1:]
	}
	return words
}

// partOfName says whether one of a and b is the first or last name of the other's full
// name, and which is which. Relations ("sister") are not names.
func partOfName(a, b Known) (short, full Known, ok bool) {
	wa, wb := nameWords(a.Key), nameWords(b.Key)
	if len(wa) > len(wb) {
		a, b, wa, wb = b, a, wb, wa
	}
	if len(wa) != 1 || len(wb) < 2 || personWords[wa[0]] || personWords[wb[len(wb)-1]] || len(wa[0]) < 2 {
		return Known{}, Known{}, false
	}
	if wa[0] == wb[0] || wa[0] == wb[len(wb)-1] {
		return a, b, true
	}
	return Known{}, Known{}, false
}
