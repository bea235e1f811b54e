package memory

import (
	"maps"
	"strings"

	"github.com/credohq/credo/transcript"
)

// speaker is who said the words a directive quotes.
type speaker int

const (
	// speakerUnknown: the quote is nowhere in what the model read, as copied: a
	// paraphrase, or an invention.
	speakerUnknown speaker = iota
	// speakerUser: the user said it as their own words.
	speakerUser
	// speakerDocument: only text the user did not say as their own holds it: another
	// role's message, or a quoted, forwarded or pasted block of a user message.
	speakerDocument
)

func (s speaker) String() string {
	switch s {
	case speakerUser:
		return "the user's own words"
	case speakerDocument:
		return "a document"
	}
	return "not found in the conversation"
}

// voices are the messages of a batch's source, each user message with its documents
// blanked out: what the user said as their own.
type voices struct {
	msgs []voice
	// own and told are the salient words of what the user said as their own and of
	// the documents, made when first asked for (wordsOf).
	own, told map[string]bool
}

type voice struct {
	user bool
	// content is the message as the model read it; own, for a user message, the same
	// with its documents blanked (nil when it has none).
	content string
	own     *string
}

// newVoices are the voices of src, nil without one.
func newVoices(src *Source) *voices {
	if src == nil {
		return nil
	}
	v := &voices{}
	for _, m := range src.Messages {
		vc := voice{user: m.Role == "user", content: m.Content}
		if vc.user {
			if docs := transcript.Documents(m.Content); len(docs) > 0 {
				own := blank(m.Content, docs)
				vc.own = &own
			}
		}
		v.msgs = append(v.msgs, vc)
	}
	return v
}

// of says who said quote: the user, when a user message holds it outside its documents
// (a sentence the user says and a document repeats is the user's); a document, when
// only text the user did not say as their own holds it; unknown otherwise.
func (v *voices) of(quote string) speaker {
	if strings.TrimSpace(quote) == "" {
		return speakerUnknown
	}
	found := speakerUnknown
	for _, m := range v.msgs {
		if m.user {
			own := m.content
			if m.own != nil {
				own = *m.own
			}
			if _, ok := transcript.Locate(own, quote); ok {
				return speakerUser
			}
			if m.own == nil {
				continue
			}
		}
		if found == speakerUnknown {
			if _, ok := transcript.Locate(m.content, quote); ok {
				found = speakerDocument
			}
		}
	}
	return found
}

// blank is content with the spans replaced by spaces, so that no quote matches across
// or inside them.
func blank(content string, spans []transcript.Span) string {
	b := []byte(content)
	for _, s := range spans {
		for i := s.Start; i < s.End && i < len(b); i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// wordsOf says who said the words of a new value (salient words, not empty) when the
// quote that should say it is not found as copied: the user, when the user's own words
// hold every one; a document, when only documents hold some; unknown otherwise.
func (v *voices) wordsOf(words map[string]bool) speaker {
	if len(words) == 0 {
		return speakerUnknown
	}
	if v.own == nil {
		v.own, v.told = map[string]bool{}, map[string]bool{}
		for _, m := range v.msgs {
			switch {
			case !m.user:
				maps.Copy(v.told, salient(m.content))
			case m.own != nil:
				maps.Copy(v.own, salient(*m.own))
				maps.Copy(v.told, salient(m.content))
			default:
				maps.Copy(v.own, salient(m.content))
			}
		}
	}
	who := speakerUser
	for w := range words {
		switch {
		case v.own[w]:
		case v.told[w]:
			who = speakerDocument
		default:
			return speakerUnknown
		}
	}
	return who
}
