// Package llmtest is a wire-level fake LLM server for tests. It speaks enough
// of the OpenAI API (/v1/chat/completions, /v1/embeddings, /v1/models) and of
// Ollama's (/api/chat, /api/embed, /api/version, /api/tags) for the real
// go-openai and ollama/api clients, and so credo's llm providers, to run
// against it unchanged. Chat answers are scripted; embeddings come from a
// deterministic bag-of-words model (see Embed). Every request is recorded.
//
// A Server is safe for concurrent use.
package llmtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/credohq/credo/llm"
)

// Model names used by OpenAIConfig and OllamaConfig, and listed by the
// model-listing endpoints unless WithModels says otherwise.
const (
	DefaultChatModel  = "qwen2.5:7b"
	DefaultEmbedModel = "nomic-embed-text"
)

// DefaultDim is the embedding dimension unless WithDim says otherwise.
const DefaultDim = 64

// DefaultContent is the chat answer when nothing scripted matches: an empty
// extraction. To a call of another schema (consolidation, review) it is a malformed
// answer, which each caller handles as it handles one. A verification (a second
// opinion, Request.Verification) is answered apart: see OnVerification.
const DefaultContent = `{"reasoning":"","facts":[]}`

// Request kinds.
const (
	KindChat    = "chat"
	KindEmbed   = "embed"
	KindModels  = "models"  // GET /v1/models, GET /api/tags
	KindVersion = "version" // GET /api/version
	KindShow    = "show"    // POST /api/show
	KindRoot    = "root"    // GET or HEAD /, Ollama's heartbeat
)

// Request is a recorded request, decoded from whichever API it used.
type Request struct {
	Provider string // llm.ProviderOpenAI or llm.ProviderOllama; "" for unknown paths
	Kind     string // KindChat, KindEmbed, ...; "" for unknown paths (answered 404)
	Method   string
	Path     string
	Model    string

	// Chat.
	Messages   []llm.Message
	Prompt     string          // all message contents joined with "\n"
	SchemaName string          // OpenAI response_format.json_schema.name; "" for Ollama
	Schema     json.RawMessage // OpenAI response_format.json_schema.schema; Ollama format
	Strict     *bool           // OpenAI response_format.json_schema.strict
	Stream     *bool           // as sent; nil when absent
	// Temperature as sent (OpenAI temperature, Ollama options.temperature);
	// nil when absent.
	Temperature *float64

	// Embed.
	Inputs         []string
	EncodingFormat string // OpenAI encoding_format as sent

	// Context, for chat: Tokens is the prompt as the fake's tokenizer counts it with the
	// template's markers; Window the window it was evaluated in (Ollama: num_ctx, at most
	// the model's context length; else the model's context length); Evaluated what the
	// model saw of it, fewer than Tokens when Cut (Ollama keeps the end). Prompt is
	// then what the model saw. NumCtx is Ollama's options.num_ctx as sent (0: none).
	Tokens, Window, Evaluated, NumCtx int
	Cut                               bool
	// EmbedCut counts the inputs an embedding call cut to the model's window.
	EmbedCut int

	Status int    // HTTP status the fake answered (or was about to answer) with
	Body   []byte // raw request body
	At     time.Time
	// Traceparent is the W3C trace context header as sent; "" when absent.
	Traceparent string
}

// Reply scripts one chat answer.
type Reply struct {
	Content string

	// Status, when non-zero, answers with this HTTP status and an error body
	// shaped like the provider's (or Body, if set).
	Status int

	// Delay holds the answer back, on top of WithLatency; use it to trip
	// client timeouts.
	Delay time.Duration

	// Token usage; zero means len(prompt)/4 and len(Content)/4.
	PromptTokens     int
	CompletionTokens int

	// FinishReason is OpenAI's finish_reason and Ollama's done_reason;
	// empty means "stop". "length" simulates a truncated answer.
	FinishReason string

	// Body, when set, is sent verbatim instead of a provider-shaped answer,
	// for malformed-response tests.
	Body string
}

// Option configures a Server.
type Option func(*Server)

// WithLatency delays every answer (chat, embed, metadata) by d.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithEmbedLatency delays embedding answers by d instead of the WithLatency delay: an
// embedding model answers far faster than a chat model.
func WithEmbedLatency(d time.Duration) Option { return func(s *Server) { s.embedLatency = &d } }

// WithDim sets the embedding dimension (default DefaultDim).
func WithDim(n int) Option { return func(s *Server) { s.dim = n } }

// WithEmbedFunc replaces the bag-of-words embedding. fn must be safe for
// concurrent use.
func WithEmbedFunc(fn func(text string) []float32) Option {
	return func(s *Server) { s.embedFunc = fn }
}

// WithAnchors makes synonyms embed close together; see EmbedAnchored.
func WithAnchors(anchors map[string]string) Option {
	return func(s *Server) { s.anchors = lowerAnchors(anchors) }
}

// WithDefaultReply sets the answer to chat calls nothing else scripts
// (default: DefaultContent).
func WithDefaultReply(r Reply) Option { return func(s *Server) { s.defaultReply = r } }

// WithModels sets the models listed by /v1/models and /api/tags.
func WithModels(names ...string) Option {
	return func(s *Server) { s.models = slices.Clone(names) }
}

// Server is a fake OpenAI + Ollama server. Chat answers come from, in order
// of precedence: the Handle function; the longest matching OnPrompt rule;
// the Script; the default reply.
type Server struct {
	srv     *httptest.Server
	closing chan struct{}

	// Set by options, read-only afterwards.
	latency      time.Duration
	embedLatency *time.Duration // nil: latency
	dim          int
	embedFunc    func(string) []float32
	anchors      map[string]string
	defaultReply Reply
	models       []string
	tokenizer    Tokenizer
	// contextLengths are the models' context lengths set by WithContextLength.
	contextLengths map[string]int
	ollamaNumCtx   int
	ollamaRefuses  bool

	mu           sync.Mutex
	requests     []Request
	handler      func(Request) Reply
	verifier     *rule
	script       []Reply
	scriptNext   int
	rules        map[string]*rule
	embedFail    int // status
	embedFailCnt int // remaining failures; negative: unlimited
	seq          int
}

type rule struct {
	replies []Reply
	next    int
}

// NewServer starts a fake server, closed on tb.Cleanup.
func NewServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := &Server{
		closing:      make(chan struct{}),
		dim:          DefaultDim,
		defaultReply: Reply{Content: DefaultContent},
		models:       []string{DefaultChatModel, DefaultEmbedModel},
		rules:        make(map[string]*rule),
		tokenizer:    O200k,
		ollamaNumCtx: DefaultOllamaNumCtx,

		contextLengths: make(map[string]int),
	}
	for _, opt := range opts {
		opt(s)
	}
	if s.dim <= 0 && s.embedFunc == nil {
		tb.Fatalf("llmtest: embedding dimension must be positive, got %d", s.dim)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	tb.Cleanup(func() {
		close(s.closing) // abort pending delays so Close doesn't wait them out
		s.srv.Close()
	})
	return s
}

// URL is the server root, e.g. http://127.0.0.1:1234: Ollama's base URL.
func (s *Server) URL() string { return s.srv.URL }

// OpenAIURL is the OpenAI API base, URL()+"/v1".
func (s *Server) OpenAIURL() string { return s.srv.URL + "/v1" }

// OpenAIConfig is an llm.Config for llm.NewOpenAI pointed at s.
func (s *Server) OpenAIConfig() llm.Config {
	return llm.Config{BaseURL: s.OpenAIURL(), APIKey: "llmtest", ChatModel: DefaultChatModel, EmbedModel: DefaultEmbedModel}
}

// OllamaConfig is an llm.Config for llm.NewOllama pointed at s.
func (s *Server) OllamaConfig() llm.Config {
	return llm.Config{BaseURL: s.URL(), ChatModel: DefaultChatModel, EmbedModel: DefaultEmbedModel}
}

// Handle makes fn answer every chat call but verifications (OnVerification),
// overriding OnPrompt rules and the script; nil restores them. fn runs concurrently and must be safe for it.
func (s *Server) Handle(fn func(req Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fn
}

// OnVerification answers successive verification calls (second opinions, see
// Request.Verification) with replies in order, the last one repeating; no replies
// restores the default: a compliant model that holds every directive. No Handle
// function, OnPrompt rule nor script answers a verification, whose prompt quotes the
// transcript an extraction's rule matches.
func (s *Server) OnVerification(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.verifier = nil
	if len(replies) > 0 {
		s.verifier = &rule{replies: slices.Clone(replies)}
	}
}

// Verification says whether req asks a second opinion: its schema is the
// verification schema's, whose answer is a list of verdicts.
func (req Request) Verification() bool {
	return req.Kind == KindChat && bytes.Contains(req.Schema, []byte(`"verdicts"`))
}

// compliant is the answer of a model that holds every directive of a verification
// prompt, one line "[D<n>] " each.
func compliant(req Request) Reply {
	var verdicts []string
	for _, m := range req.Messages {
		for line := range strings.Lines(m.Content) {
			var n int
			if _, err := fmt.Sscanf(line, "[D%d] ", &n); err == nil {
				verdicts = append(verdicts, fmt.Sprintf(`{"directive": %d, "why": "a compliant fake", "holds": true}`, n))
			}
		}
	}
	return Reply{Content: `{"verdicts": [` + strings.Join(verdicts, ", ") + `]}`}
}

// Script answers successive chat calls (not matched by an OnPrompt rule)
// with replies in order; the last one repeats. It replaces any previous
// script; no replies clears it.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = slices.Clone(replies)
	s.scriptNext = 0
}

// OnPrompt answers chat calls whose prompt contains substr with replies in
// order, the last one repeating. When several rules match, the longest
// substr wins. Registering the same substr again replaces its rule; no
// replies removes it.
func (s *Server) OnPrompt(substr string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(replies) == 0 {
		delete(s.rules, substr)
		return
	}
	s.rules[substr] = &rule{replies: slices.Clone(replies)}
}

// FailEmbeds answers the next n embedding calls with HTTP status; n < 0
// fails all of them until FailEmbeds(0, 0).
func (s *Server) FailEmbeds(status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFail, s.embedFailCnt = status, n
}

// Requests returns a copy of every request recorded so far, in arrival
// order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Chats returns the recorded chat requests.
func (s *Server) Chats() []Request { return s.kind(KindChat) }

// Embeds returns the recorded embedding requests.
func (s *Server) Embeds() []Request { return s.kind(KindEmbed) }

// ChatCount is len(Chats()) without the copy.
func (s *Server) ChatCount() int { return s.count(KindChat) }

// EmbedCount is len(Embeds()) without the copy.
func (s *Server) EmbedCount() int { return s.count(KindEmbed) }

// Reset forgets recorded requests and rewinds the script and OnPrompt rules
// to their first reply. Scripted replies, the handler and FailEmbeds stay.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
	s.scriptNext = 0
	for _, r := range s.rules {
		r.next = 0
	}
}

func (s *Server) kind(kind string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if r.Kind == kind {
			n++
		}
	}
	return n
}

func (s *Server) record(req Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
}

func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// chatReply picks the answer for req. The handler runs outside the lock so
// slow handlers don't serialize concurrent calls.
func (s *Server) chatReply(req Request) Reply {
	s.mu.Lock()
	if req.Verification() {
		defer s.mu.Unlock()
		if s.verifier != nil {
			return s.verifier.take()
		}
		return compliant(req)
	}
	h := s.handler
	if h != nil {
		s.mu.Unlock()
		return h(req)
	}
	defer s.mu.Unlock()

	var best string
	var bestRule *rule
	for substr, r := range s.rules {
		if !strings.Contains(req.Prompt, substr) {
			continue
		}
		// Longest wins; ties broken lexically so the choice doesn't depend
		// on map order.
		if bestRule == nil || cmp.Or(cmp.Compare(len(substr), len(best)), strings.Compare(best, substr)) > 0 {
			best, bestRule = substr, r
		}
	}
	if bestRule != nil {
		return bestRule.take()
	}
	if len(s.script) > 0 {
		r := s.script[min(s.scriptNext, len(s.script)-1)]
		s.scriptNext++
		return r
	}
	return s.defaultReply
}

func (r *rule) take() Reply {
	reply := r.replies[min(r.next, len(r.replies)-1)]
	r.next++
	return reply
}

// embedFailure returns the status the next embed call should fail with, or 0.
func (s *Server) embedFailure() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.embedFail == 0 || s.embedFailCnt == 0 {
		return 0
	}
	if s.embedFailCnt > 0 {
		s.embedFailCnt--
	}
	return s.embedFail
}

func (s *Server) embed(text string) []float32 {
	if s.embedFunc != nil {
		return s.embedFunc(text)
	}
	return embedAnchored(text, s.dim, s.anchors)
}

// wait sleeps for d unless the client goes away or the server closes first;
// it reports whether to go on answering.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.closing:
		return false
	}
}

// usage is what the fake reports for an answer to a prompt it evaluated evaluated
// tokens of, unless the reply scripts it.
func (s *Server) usage(reply Reply, evaluated int) (promptTokens, completionTokens int) {
	return cmp.Or(reply.PromptTokens, evaluated), cmp.Or(reply.CompletionTokens, len(s.tokenizer(reply.Content)))
}

func joinPrompt(msgs []llm.Message) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func writeRaw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmp.Or(status, http.StatusOK))
	_, _ = w.Write([]byte(body))
}

// embedDelay is how long an embedding answer waits.
func (s *Server) embedDelay() time.Duration {
	if s.embedLatency != nil {
		return *s.embedLatency
	}
	return s.latency
}
