package llm_test

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
)

// referenceText is one text of llm/testdata/tokens.jsonl with what four families' real
// tokenizers count in it (scripts/token-reference recounts them).
type referenceText struct {
	Name   string         `json:"name"`
	Text   string         `json:"text"`
	Counts map[string]int `json:"counts"`
}

func readReference(t *testing.T) []referenceText {
	t.Helper()
	f, err := os.Open("testdata/tokens.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var out []referenceText
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r referenceText
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		out = append(out, r)
	}
	require.NoError(t, sc.Err())
	require.Greater(t, len(out), 200)
	return out
}

// referenceModels are a model of each family the reference counts.
var referenceModels = map[string]string{
	"qwen2.5": "qwen2.5:7b",
	"llama3":  "llama3.1:8b",
	"gemma2":  "gemma2:9b",
	"mistral": "mistral:7b",
}

// TestTokensNeverLow checks the estimate of every family against its real tokenizer on
// chat transcripts, the prompts, and texts that tokenize badly (digits, scripts other
// than Latin, emoji, code, keys): it is never lower, and on conversations in English it
// is not wasteful either.
func TestTokensNeverLow(t *testing.T) {
	t.Parallel()
	texts := readReference(t)
	for family, model := range referenceModels {
		est := llm.NewTokens(model)
		var chatEstimate, chatCount int
		for _, r := range texts {
			want, ok := r.Counts[family]
			require.True(t, ok, "%s has no %s count", r.Name, family)
			got := est.High(r.Text)
			require.GreaterOrEqual(t, got, want, "%s (%s, family %s): estimated %d, the tokenizer counts %d",
				r.Name, model, est.Family().Name, got, want)
			if !strings.HasPrefix(r.Name, "stress:") && !strings.HasPrefix(r.Name, "prompt:") {
				chatEstimate += got
				chatCount += want
			}
		}
		ratio := float64(chatEstimate) / float64(chatCount)
		t.Logf("%s: conversations estimated at %.3fx their count", model, ratio)
		require.Less(t, ratio, est.Family().Margin*1.05, "%s wastes the window", model)
	}
}

func TestFamilyOf(t *testing.T) {
	t.Parallel()
	for model, family := range map[string]string{
		"qwen2.5:7b": "qwen", "qwen2.5:3b": "qwen", "Qwen/Qwen2.5-7B-Instruct": "qwen", "qwen3:8b": "qwen",
		"llama3.1:8b": "llama3", "meta-llama/Meta-Llama-3-8B-Instruct": "llama3", "llama3.2": "llama3",
		"gemma2:9b": "gemma", "gemma3:4b": "gemma",
		"gpt-4o-mini": "o200k", "gpt-4.1": "o200k", "gpt-5-mini": "o200k", "o3-mini": "o200k", "ft:gpt-4o-mini:org::x": "o200k",
		"gpt-4-turbo": "cl100k", "gpt-3.5-turbo": "cl100k", "text-embedding-3-small": "cl100k",
		"mistral:7b": "other", "phi3": "other", "": "other",
	} {
		require.Equal(t, family, llm.FamilyOf(model).Name, model)
	}
}

func TestTokensObserveRaisesTheMargin(t *testing.T) {
	t.Parallel()
	est := llm.NewTokens("mistral:7b")
	before := est.Margin()
	require.False(t, est.Observe(1000, 900), "a count under the estimate changes nothing")
	require.Equal(t, before, est.Margin())
	require.True(t, est.Observe(1000, 1500))
	require.InDelta(t, before*1.5*1.1, est.Margin(), 0.01)
	text := strings.Repeat("word ", 100)
	require.GreaterOrEqual(t, est.High(text), int(float64(est.Base(text))*before*1.5))
}

// BenchmarkTokensHigh: what estimating a prompt costs, a first time (counted) and again
// (the memo of long texts: every extraction prompt starts with the same instructions).
func BenchmarkTokensHigh(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 5000 {
		sb.WriteString("user: On day 12 we walked along the river, talked about the garden and the new bakery on the corner.\n")
	}
	text := sb.String()
	b.Run("counted", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for i := 0; b.Loop(); i++ {
			est := llm.NewTokens("qwen2.5:7b")
			_ = est.High(text + strconv.Itoa(i)) // never the same text: no memo
		}
	})
	b.Run("memo", func(b *testing.B) {
		est := llm.NewTokens("qwen2.5:7b")
		for b.Loop() {
			_ = est.High(text)
		}
	})
}
