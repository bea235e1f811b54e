package redact

import (
	"regexp"
	"strings"
)

// passwordPhrase is a password given as such: "password", "passwd", "passcode",
// "passphrase", "pwd" or "PIN", then "is", "was", ":" or "=", then the password, up to
// white space or a closing quote.
var passwordPhrase = regexp.MustCompile(`^(?i)(pass(?:word|wd|phrase|code)|pwd|pin)\b(?:\s+(?:is|was)\s*:?\s*|\s*[:=]\s*)["'“‘]?([^\s"'“”‘’]+)`)

// notPasswords are the words that follow "password is" in talk about a password, not
// in giving one: "my password is too long", "the password is the same".
var notPasswords = wordSet(`a an the this that it its my your our his her their mine yours ours theirs
		too so very really quite pretty not never no yes still now also just only already always
		same different wrong incorrect correct right fine ok okay good bad weak strong long short simple easy
		hard complex complicated safe secure unsafe insecure expired required needed missing invalid valid
		case sensitive changed reset set saved stored hidden encrypted hashed empty blank new old
		something nothing anything what which where when how why who there here
		in on at for of to from with by about like and or but because
		being been getting going supposed due written shared locked managed protected private secret
		stolen leaked compromised known forgotten lost generated random unique temporary default
		asterisks dots stars`)

// wordSet is the set of the words of s.
func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for w := range strings.FieldsSeq(s) {
		set[w] = true
	}
	return set
}

// findPasswords reports each password given as such in s: the word after the phrase,
// less the punctuation that ends a sentence, unless it is one of notPasswords. A PIN is
// 4 to 12 digits. The phrase is looked for where lower holds one of its words, at the
// start of a word: an expression that must first find a word boundary ignoring case
// would read every character of every message.
func findPasswords(s, lower string, add func(start, end int)) {
	for _, word := range []string{"pass", "pin", "pwd"} {
		for off := 0; ; {
			i := strings.Index(lower[off:], word)
			if i < 0 {
				break
			}
			i += off
			off = i + len(word)
			if i > 0 && isWordByte(s[i-1]) {
				continue
			}
			// A password is at most a few hundred characters after its word.
			if start, end, ok := password(s[i:min(len(s), i+maxPhrase)]); ok {
				add(i+start, i+end)
			}
		}
	}
}

// maxPhrase bounds the text read after a password's word.
const maxPhrase = 300

// password finds the password of a phrase at the start of s.
func password(s string) (start, end int, ok bool) {
	m := passwordPhrase.FindStringSubmatchIndex(s)
	if m == nil {
		return 0, 0, false
	}
	start, end = m[4], m[5]
	for end > start && strings.IndexByte(".,;:!?)]}", s[end-1]) >= 0 {
		end--
	}
	word := s[start:end]
	switch {
	case len(word) < 3, notPasswords[strings.ToLower(word)], strings.HasPrefix(word, "[redacted"):
		return 0, 0, false
	case strings.EqualFold(s[m[2]:m[3]], "pin") && !isPIN(word):
		return 0, 0, false
	case strings.EqualFold(s[m[2]:m[3]], "pwd") && (strings.ContainsAny(s[m[3]:m[4]], "iIwW") || isPath(word)):
		// "pwd: /srv/app", PWD=/home/ana: the working directory, as a shell prints it;
		// "pwd is" is talk about the command.
		return 0, 0, false
	}
	return start, end, true
}

// isWordByte says whether c is a letter, a digit or an underscore, as \b sees them.
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

// isPath says whether s is a file's path: absolute, from home, relative to ".", a
// variable's value, or a Windows drive's.
func isPath(s string) bool {
	return strings.ContainsAny(s[:1], "/~.$\\%") || len(s) > 2 && isLetter(s[0]) && s[1] == ':' && (s[2] == '\\' || s[2] == '/')
}

func isPIN(s string) bool {
	if len(s) < 4 || len(s) > 12 {
		return false
	}
	for i := range len(s) {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
