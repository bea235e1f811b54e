package transcript

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLocate(t *testing.T) {
	t.Parallel()
	const text = "Hi! Actually, I don't live in New York any more — I moved to Miami last month.\n\nMy sister's in \"Denver\", 3.5 hours away."
	for _, tc := range []struct {
		name        string
		text, quote string
		want        string // the text of the span; "" when the quote is not there
	}{
		{"exact", text, "I moved to Miami last month", "I moved to Miami last month"},
		{"case and punctuation", text, "i MOVED to miami, last month!", "I moved to Miami last month"},
		{"white space", text, "  I  moved\nto\tMiami ", "I moved to Miami"},
		{"typographic apostrophe", text, "I don’t live in New York", "I don't live in New York"},
		{"apostrophe dropped", text, "I dont live in New York", "I don't live in New York"},
		{"dash and quotes", text, "any more - I moved", "any more — I moved"},
		{"curly quotes", text, "My sister’s in “Denver”", `My sister's in "Denver`},
		{"across lines", text, "last month. My sister's", "last month.\n\nMy sister's"},
		{"numbers", text, "3.5 hours", "3.5 hours"},
		{"leading and trailing ellipsis", text, "…I moved to Miami...", "I moved to Miami"},
		{"inner ellipsis", text, "I don't live in New York ... moved to Miami", "I don't live in New York any more — I moved to Miami"},
		{"inner ellipsis character", text, "Actually…Miami", "Actually, I don't live in New York any more — I moved to Miami"},
		{"ellipsis parts out of order", text, "Miami ... New York", ""},
		{"a part matches after the part before", "Miami is nice. I live in Miami now.", "I live ... Miami", "I live in Miami"},
		{"first of two", "I live here. I live here.", "I live here", "I live here"},
		{"invented", text, "I moved to Denver last month", ""},
		{"one word changed", text, "I moved to Miami last year", ""},
		{"paraphrased", text, "User lives in Miami", ""},
		{"part of a word", text, "Mia", ""},
		{"more words than the text", "Miami", "Miami last month", ""},
		{"empty quote", text, "", ""},
		{"no words", text, " … — !", ""},
		{"empty text", "", "Miami", ""},
		{"spanish", "Te cuento: ya no soy vegetariana desde marzo.", "Ya no soy vegetariana", "ya no soy vegetariana"},
		{"french", "Je n’habite plus à Paris, j'habite à Lyon.", "Je n'habite plus à Paris", "Je n’habite plus à Paris"},
		{"accents are letters", "Je n'habite plus à Paris.", "Je n'habite plus a Paris", ""},
		{"accented case", "ÉTÉ À PARIS", "été à paris", "ÉTÉ À PARIS"},
		{"greek final sigma", "ΖΩ ΣΤΗΝ ΑΘΗΝΑ ΚΑΙ ΟΔΟΣ", "οδος", "ΟΔΟΣ"},
		{"cyrillic", "Я переехал в Москву в марте.", "переехал в москву", "переехал в Москву"},
		{"chinese within a run", "我现在住在上海，不在北京了。", "住在上海", "住在上海"},                //nolint:gosmopolitan // a script without spaces is what the case tests
		{"chinese with an ellipsis", "我现在住在上海，不在北京了。", "我现在……北京", "我现在住在上海，不在北京"}, //nolint:gosmopolitan // a script without spaces is what the case tests
		{"japanese", "私は東京に住んでいます。", "東京に住んで", "東京に住んで"},                          //nolint:gosmopolitan // a script without spaces is what the case tests
		{"hindi marks", "मैं अब दिल्ली में रहता हूँ", "दिल्ली में रहता", "दिल्ली में रहता"},
		{"hindi word changed", "मैं अब दिल्ली में रहता हूँ", "दिल्ली में रहती", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, ok := Locate(tc.text, tc.quote)
			if tc.want == "" {
				require.False(t, ok, "%q found at %v", tc.quote, s)
				return
			}
			require.True(t, ok, "%q", tc.quote)
			require.Equal(t, tc.want, tc.text[s.Start:s.End])
		})
	}
}

// A quote from the end of a long transcript is found in time, and one that is not there
// is told apart after a full scan.
func TestLocateLongText(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for b.Len() < 200_000 {
		b.WriteString("user: I moved to Miami last month and I like it there a lot.\n")
	}
	b.WriteString("user: Actually I moved to Denver in May.")
	text := b.String()
	s, ok := Locate(text, "I moved to Denver ... May")
	require.True(t, ok)
	require.Equal(t, "I moved to Denver in May", text[s.Start:s.End])
	_, ok = Locate(text, "I moved to Miami last month and I like it there a little")
	require.False(t, ok)
}

func BenchmarkLocate(b *testing.B) {
	text := strings.Repeat("user: I moved to Miami last month and I like it there a lot.\n", 3300)
	for b.Loop() {
		Locate(text, "I moved to Miami last month and I like it there a little")
	}
}
