package llm_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
)

func TestDecodeAnswer(t *testing.T) {
	t.Parallel()
	type answer struct {
		Statement string  `json:"statement"`
		Score     float64 `json:"score"`
	}
	for _, tt := range []struct {
		name, content string
		ok            bool
	}{
		{name: "Exact", content: `{"statement": "User lives in Miami", "score": 0.9}`, ok: true},
		{name: "Whitespace", content: "\n {\"statement\": \"x\"}\n", ok: true},
		{name: "NestedNull", content: `{"statement": "x", "score": null}`, ok: true},
		{name: "CaseVariantName", content: `{"Statement": "User lives in Miami"}`},
		{name: "UnknownMember", content: `{"statement": "x", "note": "y"}`},
		{name: "NameTwice", content: `{"statement": "x", "statement": "y"}`},
		{name: "TextAfter", content: `{"statement": "x"} and more`},
		{name: "TwoObjects", content: `{"statement": "x"}{"statement": "y"}`},
		{name: "WrongType", content: `{"statement": 1}`},
		{name: "Truncated", content: `{"statement": "x"`},
		{name: "TooLong", content: `{"statement": "` + string(make([]byte, 100)) + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got answer
			err := llm.DecodeAnswer(tt.content, 64, "test", &got)
			if tt.ok {
				require.NoError(t, err)
				require.NotEmpty(t, got.Statement)
				return
			}
			require.ErrorIs(t, err, llm.ErrMalformedOutput)
		})
	}
}
