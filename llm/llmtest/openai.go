package llmtest

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/credohq/credo/llm"
)

type openAIChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or an array of parts
	} `json:"messages"`
	Temperature    *float64 `json:"temperature"`
	Stream         *bool    `json:"stream"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

type openAIErrorBody struct {
	Error openAIError `json:"error"`
}

type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    any     `json:"code"`
}

func openAIErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// messageText flattens OpenAI message content, which is either a string or
// an array of {"type":"text","text":...} parts.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor an array of parts: %w", err)
	}
	var text strings.Builder
	for _, p := range parts {
		text.WriteString(p.Text)
	}
	return text.String(), nil
}

func (s *Server) openAIChat(w http.ResponseWriter, r *http.Request, req Request) {
	req.Provider, req.Kind = llm.ProviderOpenAI, KindChat

	var in openAIChatRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		s.badRequest(w, req, "llmtest: decoding chat request: "+err.Error())
		return
	}
	req.Model, req.Temperature, req.Stream = in.Model, in.Temperature, in.Stream
	for _, m := range in.Messages {
		text, err := messageText(m.Content)
		if err != nil {
			s.badRequest(w, req, "llmtest: "+err.Error())
			return
		}
		req.Messages = append(req.Messages, llm.Message{Role: m.Role, Content: text})
	}
	req.Prompt = joinPrompt(req.Messages)
	if rf := in.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		req.SchemaName, req.Schema, req.Strict = rf.JSONSchema.Name, rf.JSONSchema.Schema, rf.JSONSchema.Strict
	}
	if in.Stream != nil && *in.Stream {
		s.badRequest(w, req, "llmtest: streaming chat completions are not supported")
		return
	}

	// An OpenAI-compatible server (vLLM, llama.cpp's, OpenAI) refuses a prompt longer
	// than the model's window, as OpenAI words it.
	req.Tokens = len(s.promptTokens(req.Messages))
	req.Window, req.Evaluated = s.contextLength(in.Model), req.Tokens
	if req.Tokens > req.Window {
		req.Status = http.StatusBadRequest
		s.record(req)
		writeJSON(w, req.Status, openAIErrorBody{Error: openAIError{
			Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", req.Window, req.Tokens),
			Type:    "invalid_request_error", Code: "context_length_exceeded",
		}})
		return
	}

	reply := s.chatReply(req)
	req.Status = cmp.Or(reply.Status, http.StatusOK)
	s.record(req)
	if !s.wait(r.Context(), s.latency+reply.Delay) {
		return
	}
	switch {
	case reply.Body != "":
		writeRaw(w, reply.Status, reply.Body)
		return
	case reply.Status != 0:
		writeError(w, req.Provider, reply.Status, scriptedErrorMessage(reply.Status))
		return
	}

	promptTokens, completionTokens := s.usage(reply, req.Evaluated)
	writeJSON(w, http.StatusOK, map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest-%d", s.nextID()),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   in.Model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": reply.Content},
			"finish_reason": cmp.Or(reply.FinishReason, "stop"),
		}},
		"usage": map[string]int{
			"prompt_tokens":     promptTokens,
			"completion_tokens": completionTokens,
			"total_tokens":      promptTokens + completionTokens,
		},
	})
}

type openAIEmbedRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
}

// embedInputs decodes an input that is a string or an array of strings (the
// forms both APIs accept for text).
func embedInputs(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("input is neither a string nor an array of strings: %w", err)
	}
	return many, nil
}

func (s *Server) openAIEmbed(w http.ResponseWriter, r *http.Request, req Request) {
	req.Provider, req.Kind = llm.ProviderOpenAI, KindEmbed

	var in openAIEmbedRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		s.badRequest(w, req, "llmtest: decoding embeddings request: "+err.Error())
		return
	}
	req.Model, req.EncodingFormat = in.Model, in.EncodingFormat
	inputs, err := embedInputs(in.Input)
	if err != nil {
		s.badRequest(w, req, "llmtest: "+err.Error())
		return
	}
	req.Inputs = inputs
	switch in.EncodingFormat {
	case "", "float", "base64":
	default:
		s.badRequest(w, req, fmt.Sprintf("llmtest: unsupported encoding_format %q", in.EncodingFormat))
		return
	}
	if status := s.embedFailure(); status != 0 {
		req.Status = status
		s.record(req)
		if s.wait(r.Context(), s.embedDelay()) {
			writeError(w, req.Provider, status, scriptedErrorMessage(status))
		}
		return
	}

	// OpenAI refuses an input longer than the model's window (8,192 unless
	// WithContextLength sets one: nomic-embed-text takes that much when served outside
	// Ollama).
	window, ok := s.contextLengths[in.Model]
	if !ok {
		window = 8192
	}
	for _, text := range inputs {
		if n := len(s.tokenizer(text)); n > window {
			req.Status = http.StatusBadRequest
			s.record(req)
			writeJSON(w, req.Status, openAIErrorBody{Error: openAIError{
				Message: fmt.Sprintf("This model's maximum context length is %d tokens, however you requested %d tokens", window, n),
				Type:    "invalid_request_error", Code: "context_length_exceeded",
			}})
			return
		}
	}
	req.Status = http.StatusOK
	s.record(req)
	data := make([]map[string]any, len(inputs))
	tokens := 0
	for i, text := range inputs {
		vec := s.embed(text)
		var embedding any = vec
		if in.EncodingFormat == "base64" {
			embedding = encodeBase64(vec)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": embedding}
		tokens += len(s.tokenizer(text))
	}
	if !s.wait(r.Context(), s.embedDelay()) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   data,
		"model":  in.Model,
		"usage":  map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// encodeBase64 is OpenAI's base64 encoding: little-endian float32s.
func encodeBase64(vec []float32) string {
	buf := make([]byte, 4*len(vec))
	for i, x := range vec {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(buf)
}

func (s *Server) openAIModels() any {
	data := make([]map[string]any, len(s.models))
	for i, m := range s.models {
		data[i] = map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "llmtest"}
	}
	return map[string]any{"object": "list", "data": data}
}
