package transcript

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDocuments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		content string
		want    []string // the text of each span
	}{
		{"plain", "I moved to Miami last month.\nIt is hot.", nil},
		{"empty", "", nil},
		{"greater than in a line", "3 > 2, and 5>4.\nSo x -> y.", nil},
		{"from in a sentence", "From: me, with love.\nSee you soon.", nil},
		{"one header line alone", "From: Ana <ana@example.com>\nShe wrote that she moved.", nil},
		{"the same header twice", "To: Ana\nTo: Ben\nHi both.", nil},
		{"words before the colon", "Subject to change: everything.\nDate night: Friday.", nil},
		{"forwarded words in a sentence", "I got a forwarded message: it said nothing.", nil},
		{"dashes without the words", "----------\nI live in Lisbon.", nil},

		{"quoted lines", "> I live in Berlin.\n> Since 2019.\nNot any more, I moved to Miami.",
			[]string{"> I live in Berlin.\n> Since 2019."}},
		{"nested quotes", "You said:\n>> I live in Berlin.\n> > Really?\nYes.",
			[]string{">> I live in Berlin.\n> > Really?"}},
		{"indented quote", "Look:\n   > I live in Berlin.\nok", []string{"   > I live in Berlin."}},
		{"quotes parted by a blank line", "> one\n\n> two\nmine", []string{"> one\n\n> two"}},
		{"quotes parted by my words", "> one\nmine\n> two", []string{"> one", "> two"}},
		{"crlf", "> one\r\n> two\r\nmine\r\n", []string{"> one\r\n> two"}},
		{"lone carriage return", "mine\r> quoted\rmine", []string{"> quoted"}},

		{"closed fence", "Here is the config:\n```yaml\nuser: Berlin\n```\nI changed it.",
			[]string{"```yaml\nuser: Berlin\n```"}},
		{"tilde fence", "~~~~\n> not a separate quote\n~~~\n~~~~\nafter", []string{"~~~~\n> not a separate quote\n~~~\n~~~~"}},
		{"unclosed fence", "Log:\n```\nI live in Berlin\n\n", []string{"```\nI live in Berlin"}},
		{"a shorter fence does not close", "```\ncode\n``\nmore", []string{"```\ncode\n``\nmore"}},
		{"inline code is no fence", "```x``` is code.\nI live in Rome.", nil},

		{"gmail forward", "FYI, see below.\n\n---------- Forwarded message ---------\nFrom: Bob <bob@example.com>\nDate: Mon, Mar 2, 2026\nSubject: move\nTo: Ana\n\nI moved to Denver.\n",
			[]string{"---------- Forwarded message ---------\nFrom: Bob <bob@example.com>\nDate: Mon, Mar 2, 2026\nSubject: move\nTo: Ana\n\nI moved to Denver."}},
		{"outlook reply", "Sounds good.\n\n-----Original Message-----\nFrom: Bob\nSent: Monday\nI quit my job.",
			[]string{"-----Original Message-----\nFrom: Bob\nSent: Monday\nI quit my job."}},
		{"thunderbird forward", "see\n-------- Forwarded Message --------\nbody", []string{"-------- Forwarded Message --------\nbody"}},
		{"apple mail forward", "Read this:\nBegin forwarded message:\n\nFrom: Bob\nI moved.", []string{"Begin forwarded message:\n\nFrom: Bob\nI moved."}},
		{"forwarded message colon", "Forwarded message:\nI moved.", []string{"Forwarded message:\nI moved."}},
		{"a quote before a forward", "> hi\nok\n---------- Forwarded message ---------\nbody", []string{"> hi", "---------- Forwarded message ---------\nbody"}},

		{"pasted email", "Can you answer this?\nFrom: Bob <bob@example.com>\nSent: Monday, March 2, 2026\nTo: Ana\nSubject: Re: the move\n\nI live in Denver now.",
			[]string{"From: Bob <bob@example.com>\nSent: Monday, March 2, 2026\nTo: Ana\nSubject: Re: the move\n\nI live in Denver now."}},
		{"headers parted by blank lines", "mine\nFROM: Bob\n\n\nsubject: hello\nbody\n", []string{"FROM: Bob\n\n\nsubject: hello\nbody"}},
		{"headers parted by a line", "From: Bob\nI moved.\nDate: today", nil},
		{"pasted email after a quote", "> a\nFrom: Bob\nTo: Ana\nbody", []string{"> a\nFrom: Bob\nTo: Ana\nbody"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, s := range Documents(tc.content) {
				got = append(got, tc.content[s.Start:s.End])
			}
			require.Equal(t, tc.want, got, "%q", tc.content)
		})
	}
}
