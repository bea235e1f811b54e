// Package entity says whom a belief is about: it turns the subject a model or an
// operator wrote ("user", "User's sister", "my wife", "Sarah") into the key of an
// entity of the scope's registry, deterministically and without a model call.
//
// A subject resolves in two steps. Key normalises it: case, whitespace, quotes, a
// leading "the", and the user's own possessive ("user's sister", "my sister" → sister);
// every way of naming the user ("I", "me", "the user") is the user. The registry then
// maps the key through the scope's aliases: a name the registry learned for an entity,
// from a conversation (a fact's subject_aliases) or from an operator's merge. A key that
// is no alias names a new entity. Nothing ever merges two entities by similarity:
// Proposals finds pairs that may be one (a kinship synonym, a first name and a full
// name) for an operator to decide.
//
// memory owns the registry's tables (entity, entity_alias), since an entity changes in
// the same transaction as the beliefs about it; this package holds the rules alone.
package entity

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/credohq/credo/transcript"
)

// User is the key (and name) of the entity every scope has: the person the memory is
// about, what "I", "me" and "user" resolve to.
const User = "user"

// Kind is what sort of entity one is.
type Kind string

// The kinds of entity. Other is a name nothing has said the kind of yet; the first
// fact that says it (subject_kind, or a kinship word) sets it.
const (
	KindUser         Kind = "user"
	KindPerson       Kind = "person"
	KindOrganisation Kind = "organisation"
	KindPlace        Kind = "place"
	KindThing        Kind = "thing"
	KindOther        Kind = "other"
)

// Kinds are the kinds a fact may give its subject (subject_kind): not user, which only
// the user entity is.
var Kinds = []Kind{KindPerson, KindOrganisation, KindPlace, KindThing, KindOther}

// ValidKind says whether k is a kind a writer may give.
func ValidKind(k Kind) bool { return slices.Contains(Kinds, k) }

// MaxAliases bounds the aliases one fact may give its subject; MaxNameLen one name.
const (
	MaxAliases = 8
	MaxNameLen = 200
)

// userNames are the subjects that name the user.
var userNames = map[string]bool{"user": true, "i": true, "me": true, "myself": true, "my": true, "mine": true,
	"the user": true, "user himself": true, "user herself": true, "user themself": true, "": true}

// userPossessives are the prefixes that make a subject something of the user's.
var userPossessives = []string{"user's ", "users' ", "my "}

// trimmed are the characters a name never starts or ends with.
const trimmed = "\"'`.,;:!?()[]{}<>*_ "

// Key is the normalised form of subject that the registry is keyed by: lower case,
// single spaces, no surrounding quotes or punctuation, no leading "the", and none of the
// user's possessive ("user's sister" and "my sister" are the sister). Every name of the
// user is User. The migration that first resolved existing beliefs
// (021_entities.up.sql) applies the same steps in SQL.
func Key(subject string) string {
	return strings.ToLower(strip(subject))
}

// Name is subject as the registry shows it: Key's steps with its case kept ("Sarah",
// "sister"); the user is User.
func Name(subject string) string {
	return strip(subject)
}

// strip applies Key's steps but lower-casing: the prefixes are matched in any case.
func strip(subject string) string {
	s := strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(subject)
	s = strings.Trim(strings.Join(strings.Fields(s), " "), trimmed)
	s = trimPrefixFold(s, "the ")
	for _, p := range userPossessives {
		if rest, ok := cutPrefixFold(s, p); ok && rest != "" {
			s = strings.Trim(trimPrefixFold(rest, "the "), trimmed)
			break
		}
	}
	if userNames[strings.ToLower(s)] {
		return User
	}
	return s
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func trimPrefixFold(s, prefix string) string {
	rest, _ := cutPrefixFold(s, prefix)
	return rest
}

// KindOf is the kind a new entity of key gets when no fact says it: the user, a person
// for a word of kinship or of a role among people ("sister", "boss"), else Other.
func KindOf(key string) Kind {
	if key == User {
		return KindUser
	}
	if personWords[lastWord(key)] {
		return KindPerson
	}
	return KindOther
}

func lastWord(key string) string {
	if i := strings.LastIndexByte(key, ' '); i >= 0 {
		return key[i+1:]
	}
	return key
}

// Relations are the people text names by their relation to its speaker, as entity keys:
// "my sister" and "our landlord" are sister and landlord. What such a text says may be
// of them, not of the speaker.
func Relations(text string) []string {
	var out []string
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-'
	})
	for i := 1; i < len(words); i++ {
		if possessives[words[i-1]] && personWords[words[i]] && !slices.Contains(out, words[i]) {
			out = append(out, words[i])
		}
	}
	return out
}

var possessives = map[string]bool{"my": true, "our": true, "mine": true}

// personWords are nouns that name a person by relation to the user.
var personWords = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(`mother mom mum mommy mummy ma mama father dad daddy papa pa parent parents sister sis
		brother bro sibling siblings wife husband spouse partner fiance fiancee girlfriend boyfriend ex ex-wife ex-husband
		son daughter child kid kids children baby grandmother grandma granny grandfather grandpa grandson granddaughter
		grandchild aunt uncle cousin niece nephew stepmother stepfather stepson stepdaughter stepbrother stepsister
		mother-in-law father-in-law sister-in-law brother-in-law son-in-law daughter-in-law friend roommate flatmate
		neighbor neighbour boss manager coworker colleague teammate mentor therapist doctor dentist landlord tutor
		teacher coach assistant`) {
		m[w] = true
	}
	return m
}()

// CheckName is why name cannot be an entity's name or alias, "" when it can.
func CheckName(name string) string {
	switch {
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	case strings.ContainsRune(name, 0):
		return "contains a NUL character"
	case len(name) > MaxNameLen:
		return "is longer than 200 bytes"
	case strings.Trim(name, trimmed) == "":
		return "is empty"
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return "contains a control character"
		}
	}
	return ""
}

// Nearest is the name among names nearest to name by edit distance of their keys, ""
// when names is empty or none is within half of name's length: what an unknown name's
// error suggests.
func Nearest(name string, names []string) string {
	key := Key(name)
	limit := len(key) / 2
	best, bestDist := "", limit+1
	for _, n := range names {
		if d := transcript.EditDistance(key, Key(n), limit); d < bestDist || (d == bestDist && best != "" && n < best) {
			best, bestDist = n, d
		}
	}
	return best
}
