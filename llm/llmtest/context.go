package llmtest

import (
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/credohq/credo/llm"
)

// A Tokenizer cuts text into tokens, which joined give the text back: what the fake
// counts, cuts and reports in usage.
type Tokenizer func(text string) []string

// O200k is the default Tokenizer: OpenAI's o200k, a real tokenizer, and not the one
// credo's estimator counts with (it counts with cl100k), so that a test passes by
// estimating honestly, not by sharing the fake's arithmetic.
func O200k(text string) []string {
	_, toks, err := o200k().Encode(text)
	if err != nil {
		return strings.SplitAfter(text, "")
	}
	return toks
}

var o200k = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		panic("llmtest: o200k: " + err.Error())
	}
	return c
})

// Scaled is a tokenizer that counts factor times what next does, every token of next
// cut into factor pieces (whole characters where they can be): a model family whose
// tokenizer credo's estimator underestimates, for tests of what follows.
func Scaled(next Tokenizer, factor int) Tokenizer {
	return func(text string) []string {
		var out []string
		for _, t := range next(text) {
			out = append(out, t)
			for range factor - 1 {
				out = append(out, "")
			}
		}
		return out
	}
}

// ByteQuarters counts a token per four bytes, without tokenizing: for benchmarks that
// measure the pipeline, where a real tokenizer's work in the fake would be counted as
// the pipeline's.
func ByteQuarters(text string) []string {
	var out []string
	for len(text) > 4 {
		out = append(out, text[:4])
		text = text[4:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

// Context lengths the fake gives its models unless WithContextLength says otherwise:
// qwen2.5's, and the one nomic-embed-text was trained with (Ollama embeds no more).
const (
	DefaultChatContext  = 32768
	DefaultEmbedContext = 2048
	// DefaultOllamaNumCtx is the window Ollama runs a model with when a request sends
	// no num_ctx: OLLAMA_CONTEXT_LENGTH as Compose sets it.
	DefaultOllamaNumCtx = 8192
)

// Chat template overhead the fake counts, as a chat model's template adds it.
const (
	templatePerMessage = 5
	templateReply      = 3
)

// WithTokenizer sets the fake's tokenizer (default O200k).
func WithTokenizer(t Tokenizer) Option { return func(s *Server) { s.tokenizer = t } }

// WithContextLength sets the context length model was trained with: what Ollama's
// /api/show reports, and the most it runs with; the window an OpenAI-compatible server
// refuses longer prompts by.
func WithContextLength(model string, tokens int) Option {
	return func(s *Server) { s.contextLengths[model] = tokens }
}

// WithOllamaNumCtx sets the window Ollama runs a model with when a request sends no
// num_ctx (default DefaultOllamaNumCtx).
func WithOllamaNumCtx(n int) Option { return func(s *Server) { s.ollamaNumCtx = n } }

// WithOllamaRefusal makes the Ollama side honour truncate: false as Ollama 0.12 and
// later do, refusing a prompt longer than its window; by default it cuts the prompt's
// beginning whatever the request says, as older versions do.
func WithOllamaRefusal() Option { return func(s *Server) { s.ollamaRefuses = true } }

// contextLength is model's context length.
func (s *Server) contextLength(model string) int {
	if n, ok := s.contextLengths[model]; ok {
		return n
	}
	if model == DefaultEmbedModel {
		return DefaultEmbedContext
	}
	return DefaultChatContext
}

// promptTokens tokenizes a chat request's messages as a chat template would lay them
// out: the messages' tokens, each message's markers, and the reply's.
func (s *Server) promptTokens(msgs []llm.Message) []string {
	var toks []string
	for _, m := range msgs {
		for range templatePerMessage {
			toks = append(toks, "")
		}
		toks = append(toks, s.tokenizer(m.Content)...)
	}
	for range templateReply {
		toks = append(toks, "")
	}
	return toks
}

// CountPrompt is how many tokens the fake counts in a chat request of msgs.
func (s *Server) CountPrompt(msgs []llm.Message) int { return len(s.promptTokens(msgs)) }

// evaluate is what a model with window tokens sees of a prompt: all of it, or, when it
// is longer, its end, as Ollama's runner keeps it.
func evaluate(toks []string, window int) (seen string, evaluated int, cut bool) {
	if window > 0 && len(toks) > window {
		toks, cut = toks[len(toks)-window:], true
	}
	return strings.Join(toks, ""), len(toks), cut
}
