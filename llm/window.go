package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Defaults of the windows. An OpenAI-compatible server does not say its model's window,
// so MODEL_CONTEXT does, 8,192 tokens unless set: what vLLM and llama.cpp's server are
// commonly started with, and what Compose gives Ollama (OLLAMA_CONTEXT_LENGTH). The
// embedding window is nomic-embed-text's and OpenAI's text-embedding-3's.
const (
	DefaultContext      = 8192
	DefaultEmbedContext = 8192
	// DefaultAnswerTokens is the room kept in the window for the model's answer: an
	// extraction of a busy conversation is 1,000 to 1,500 tokens.
	DefaultAnswerTokens = 2048
)

// Where a window comes from (Window.Source).
const (
	WindowFromModel   = "model"   // the model's own context length, from the server
	WindowFromSetting = "setting" // MODEL_CONTEXT or EMBED_CONTEXT
	WindowFromDefault = "default" // neither said: the default
)

// Window is a model's context window.
type Window struct {
	Tokens int
	// Source says where Tokens comes from: WindowFromModel, WindowFromSetting or
	// WindowFromDefault.
	Source string
}

// Sizer sizes chat prompts to the chat model's window; every Provider is one. Chat
// refuses, without sending it, a request whose estimate does not fit; a caller that
// would rather cut its prompt in parts (extraction) asks first.
type Sizer interface {
	// ChatWindow is the chat model's window.
	ChatWindow(ctx context.Context) (Window, error)
	// ChatTokens estimates prompts as the chat model counts them.
	ChatTokens() *Tokens
	// AnswerTokens is the room kept in the window for an answer.
	AnswerTokens() int
}

// ErrContextLength is what every error about a prompt longer than the model's window
// wraps (errors.Is): one that was not sent because it would not fit, one the server
// refused for its length, and one the server evaluated shorter than sent. Sent again as
// it is, it fails again: a caller cuts it smaller, or fails.
var ErrContextLength = errors.New("prompt longer than the model's context window")

// Why a prompt did not fit (ContextError.Cause).
const (
	// ContextTooLong: estimated longer than the window, not sent.
	ContextTooLong = "too_long"
	// ContextRefused: the server refused it for its length.
	ContextRefused = "refused"
	// ContextCut: the server evaluated fewer tokens than were sent; its answer is not
	// used.
	ContextCut = "cut"
)

// ContextError is a prompt that did not fit the model's window.
type ContextError struct {
	Provider string
	// Cause is ContextTooLong, ContextRefused or ContextCut.
	Cause string
	// Estimated is the prompt's estimate (Tokens.Messages), Window the model's window.
	Estimated int
	Window    int
	// Evaluated is the server's count of the prompt it evaluated, for ContextCut.
	Evaluated int
	// Err is the server's answer, for ContextRefused.
	Err error
}

func (e *ContextError) Error() string {
	switch e.Cause {
	case ContextRefused:
		return fmt.Sprintf("llm: %s chat: the server refused a prompt of about %d tokens for its length: %v", e.Provider, e.Estimated, e.Err)
	case ContextCut:
		return fmt.Sprintf("llm: %s chat: the server evaluated %d tokens of a prompt of about %d (window %d): it was cut, and its answer is not used",
			e.Provider, e.Evaluated, e.Estimated, e.Window)
	}
	return fmt.Sprintf("llm: %s chat: a prompt of about %d tokens does not fit the window of %d with room for the answer",
		e.Provider, e.Estimated, e.Window)
}

// Unwrap makes e ErrContextLength, and the server's error for ContextRefused.
func (e *ContextError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrContextLength, e.Err}
	}
	return []error{ErrContextLength}
}

// IsContextLength reports whether err is about a prompt longer than the window.
func IsContextLength(err error) bool { return errors.Is(err, ErrContextLength) }

// windowSource learns a model's window once: on a server that tells it, the model's
// own, never above the setting when one is set; elsewhere the setting, or def. A failure
// to learn it is not kept: the next call asks again.
type windowSource struct {
	// discover asks the server for the model's window, 0 when it cannot say; nil for
	// servers that never say (OpenAI-compatible).
	discover func(ctx context.Context) (int, error)
	setting  int
	def      int

	mu     sync.Mutex
	window Window
}

func (s *windowSource) get(ctx context.Context) (Window, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.window.Tokens > 0 {
		return s.window, nil
	}
	w := Window{Tokens: s.def, Source: WindowFromDefault}
	if s.setting > 0 {
		w = Window{Tokens: s.setting, Source: WindowFromSetting}
	}
	if s.discover != nil {
		n, err := s.discover(ctx)
		if err != nil {
			return Window{}, err
		}
		if n > 0 && (s.setting <= 0 || n < s.setting) {
			w = Window{Tokens: n, Source: WindowFromModel}
		}
	}
	s.window = w
	return w, nil
}

// chatSizing is what both providers share to fit their chat prompts: the window, the
// estimator and the answer's room.
type chatSizing struct {
	provider string
	tokens   *Tokens
	answer   int
	window   *windowSource
}

func newChatSizing(provider string, cfg Config, discover func(ctx context.Context) (int, error)) *chatSizing {
	return &chatSizing{
		provider: provider, tokens: NewTokens(cfg.ChatModel), answer: cfg.answerTokens(),
		window: &windowSource{discover: discover, setting: cfg.Context, def: DefaultContext},
	}
}

// ChatWindow is the chat model's window.
func (s *chatSizing) ChatWindow(ctx context.Context) (Window, error) { return s.window.get(ctx) }

// ChatTokens is the chat model's estimator.
func (s *chatSizing) ChatTokens() *Tokens { return s.tokens }

// AnswerTokens is the room kept for an answer.
func (s *chatSizing) AnswerTokens() int { return s.answer }

// chatFit is how one request fits the window.
type chatFit struct {
	estimate, base int
	window         Window
	// numCtx is the window asked of a server that takes one per request (Ollama), 0
	// for others; numPredict the most tokens the answer may take in it.
	numCtx, numPredict int
}

// fit sizes msgs: a request whose estimate and the answer's room do not fit the window
// is a ContextTooLong error.
func (s *chatSizing) fit(ctx context.Context, msgs []Message) (chatFit, error) {
	w, err := s.ChatWindow(ctx)
	if err != nil {
		return chatFit{}, err
	}
	// No tokenizer holds fewer than a byte a token: a prompt that fits by its bytes
	// needs no counting (most do, at 8,192 tokens), and its count is never checked
	// against a Low, as no server's window would cut it.
	est, base := replyOverhead, 0
	for _, m := range msgs {
		est += messageOverhead + len(m.Content)
	}
	if est+s.answer > min(w.Tokens, DefaultContext) {
		est, base = s.tokens.count(msgs)
	}
	f := chatFit{estimate: est, base: base, window: w}
	if est+s.answer > w.Tokens {
		return f, &ContextError{Provider: s.provider, Cause: ContextTooLong, Estimated: est, Window: w.Tokens}
	}
	f.numCtx = numCtxFor(est+s.answer, w.Tokens)
	f.numPredict = f.numCtx - est
	return f, nil
}

// numCtxFor is the window to ask for a prompt that needs need tokens: the smallest power
// of two from 8,192 that holds it, at most the model's window. Steps, not the need
// itself, so that Ollama, which loads the model again whenever num_ctx changes, reloads
// rarely; 8,192 first, which is what Compose starts Ollama with.
func numCtxFor(need, window int) int {
	n := DefaultContext
	for n < need {
		n *= 2
	}
	return min(n, window)
}

// minCutCheck is the base count from which a count below the estimator's Low is taken
// for a cut.
const minCutCheck = 2048

// check is what the server's count of the evaluated prompt (0: it reported none) says
// of a call sized by f: a count that filled the window asked (Ollama cuts a longer
// prompt to it), or below what any tokenizer measured would count, means the prompt was
// cut, and a ContextCut error. A count above the estimate raises the estimator's margin.
func (s *chatSizing) check(f chatFit, evaluated int) error {
	if evaluated <= 0 {
		return nil
	}
	// A prompt shorter than minCutCheck fits any window a server runs with: a low count
	// for it is not a cut (and fakes in tests report what they are scripted to).
	low := s.tokens.low(f.base)
	if f.numCtx > 0 && evaluated >= f.numCtx-1 {
		// The prompt was longer than the window asked: so much was the estimate low.
		s.tokens.Observe(f.estimate, f.numCtx+1)
		return &ContextError{Provider: s.provider, Cause: ContextCut, Estimated: f.estimate, Window: f.window.Tokens, Evaluated: evaluated}
	}
	if f.base >= minCutCheck && evaluated < low {
		return &ContextError{Provider: s.provider, Cause: ContextCut, Estimated: f.estimate, Window: f.window.Tokens, Evaluated: evaluated}
	}
	s.tokens.Observe(f.estimate, evaluated)
	return nil
}

// refusedForLength says whether a model server's error answer refuses a prompt for its
// length. The servers say it only in words or in codes of their own: OpenAI's code
// context_length_exceeded, llama.cpp's type exceed_context_size_error, vLLM's "maximum
// context length", Ollama's "longer than the context length" (its truncate: false) and
// "exceeds ... context length".
func refusedForLength(se *StatusError, code, kind string) bool {
	if se == nil {
		return false
	}
	switch se.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity,
		http.StatusInternalServerError: // some Ollama versions answer a runner's refusal with 500
	default:
		return false
	}
	if code == "context_length_exceeded" || kind == "exceed_context_size_error" {
		return true
	}
	msg := strings.ToLower(se.Message)
	for _, phrase := range []string{"context length", "context window", "context size", "maximum context", "too many tokens", "prompt is too long"} {
		if strings.Contains(msg, phrase) {
			return true
		}
	}
	return false
}

// FixedSizer is a Sizer of a window of tokens for model, with the default room for the
// answer: for a Chatter that is no provider (a wrapper, a test's).
func FixedSizer(tokens int, model string) Sizer {
	return newChatSizing("", Config{ChatModel: model, Context: tokens}, nil)
}
