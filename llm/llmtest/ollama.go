package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/credohq/credo/llm"
)

type ollamaChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Stream   *bool                      `json:"stream"`
	Format   json.RawMessage            `json:"format"`
	Options  map[string]json.RawMessage `json:"options"`
	Truncate *bool                      `json:"truncate"`
}

func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request, req Request) {
	req.Provider, req.Kind = llm.ProviderOllama, KindChat

	var in ollamaChatRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		s.badRequest(w, req, "llmtest: decoding chat request: "+err.Error())
		return
	}
	req.Model, req.Stream = in.Model, in.Stream
	if len(in.Format) > 0 && string(in.Format) != "null" {
		req.Schema = in.Format
	}
	if raw, ok := in.Options["temperature"]; ok {
		var t float64
		if err := json.Unmarshal(raw, &t); err != nil {
			s.badRequest(w, req, "llmtest: options.temperature: "+err.Error())
			return
		}
		req.Temperature = &t
	}
	if raw, ok := in.Options["num_ctx"]; ok {
		if err := json.Unmarshal(raw, &req.NumCtx); err != nil {
			s.badRequest(w, req, "llmtest: options.num_ctx: "+err.Error())
			return
		}
	}
	for _, m := range in.Messages {
		req.Messages = append(req.Messages, llm.Message{Role: m.Role, Content: m.Content})
	}
	req.Prompt = joinPrompt(req.Messages)

	// Ollama runs the model with num_ctx (its default without one), at most the
	// context length the model was trained with; a longer prompt is cut to its end, or
	// refused where truncate: false is honoured.
	toks := s.promptTokens(req.Messages)
	req.Tokens = len(toks)
	req.Window = min(cmp.Or(req.NumCtx, s.ollamaNumCtx), s.contextLength(in.Model))
	if req.Tokens > req.Window && s.ollamaRefuses && in.Truncate != nil && !*in.Truncate {
		req.Status = http.StatusBadRequest
		s.record(req)
		writeError(w, req.Provider, req.Status, "the request exceeds the available context size, try increasing it")
		return
	}
	seen, evaluated, cut := evaluate(toks, req.Window)
	req.Evaluated, req.Cut = evaluated, cut
	if cut {
		req.Prompt = seen
	}

	reply := s.chatReply(req)
	req.Status = cmp.Or(reply.Status, http.StatusOK)
	s.record(req)
	start := time.Now()
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

	// Whether or not streaming was asked for, answer with one final NDJSON
	// line: the ollama client reads the body line by line either way and
	// only needs done:true on the last one.
	promptTokens, completionTokens := s.usage(reply, req.Evaluated)
	if in.Stream == nil || *in.Stream {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"model":             in.Model,
		"created_at":        time.Now().UTC(),
		"message":           map[string]any{"role": "assistant", "content": reply.Content},
		"done":              true,
		"done_reason":       cmp.Or(reply.FinishReason, "stop"),
		"total_duration":    time.Since(start),
		"prompt_eval_count": promptTokens,
		"eval_count":        completionTokens,
	})
}

type ollamaEmbedRequest struct {
	Model    string          `json:"model"`
	Input    json.RawMessage `json:"input"`
	Truncate *bool           `json:"truncate"`
}

func (s *Server) ollamaEmbed(w http.ResponseWriter, r *http.Request, req Request) {
	req.Provider, req.Kind = llm.ProviderOllama, KindEmbed

	var in ollamaEmbedRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		s.badRequest(w, req, "llmtest: decoding embed request: "+err.Error())
		return
	}
	req.Model = in.Model
	inputs, err := embedInputs(in.Input)
	if err != nil {
		s.badRequest(w, req, "llmtest: "+err.Error())
		return
	}
	req.Inputs = inputs
	if status := s.embedFailure(); status != 0 {
		req.Status = status
		s.record(req)
		if s.wait(r.Context(), s.embedDelay()) {
			writeError(w, req.Provider, status, scriptedErrorMessage(status))
		}
		return
	}

	// Ollama embeds at most the model's context length of an input: it refuses a longer
	// one with truncate: false, and otherwise keeps its beginning.
	window := s.contextLength(in.Model)
	vecs := make([][]float32, len(inputs))
	tokens := 0
	for i, text := range inputs {
		toks := s.tokenizer(text)
		if len(toks) > window {
			if in.Truncate != nil && !*in.Truncate {
				s.badRequest(w, req, "input exceeds maximum context length")
				return
			}
			toks = toks[:window]
			text = strings.Join(toks, "")
			req.EmbedCut++
		}
		vecs[i] = s.embed(text)
		tokens += len(toks)
	}
	req.Status = http.StatusOK
	s.record(req)
	if !s.wait(r.Context(), s.embedDelay()) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"model":             in.Model,
		"embeddings":        vecs,
		"prompt_eval_count": tokens,
	})
}

func (s *Server) ollamaTags() any {
	models := make([]map[string]any, len(s.models))
	for i, m := range s.models {
		models[i] = map[string]any{
			"name":        m,
			"model":       m,
			"modified_at": time.Time{},
			"size":        0,
			"digest":      fmt.Sprintf("llmtest-%d", i),
			"details":     map[string]any{"format": "gguf"},
		}
	}
	return map[string]any{"models": models}
}

type ollamaShowRequest struct {
	Model string `json:"model"`
	Name  string `json:"name"`
}

// ollamaShow answers /api/show with the model's architecture and context length, as
// Ollama's model_info gives them; 404 for a model it does not list.
func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request, req Request) {
	req.Provider, req.Kind = llm.ProviderOllama, KindShow
	var in ollamaShowRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		s.badRequest(w, req, "llmtest: decoding show request: "+err.Error())
		return
	}
	req.Model = cmp.Or(in.Model, in.Name)
	if !llm.HasModel(s.models, req.Model) {
		req.Status = http.StatusNotFound
		s.record(req)
		writeError(w, req.Provider, req.Status, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	arch := "qwen2"
	if req.Model == DefaultEmbedModel {
		arch = "nomic-bert"
	}
	s.meta(w, r, req, map[string]any{
		"details":    map[string]any{"format": "gguf", "family": arch},
		"model_info": map[string]any{"general.architecture": arch, arch + ".context_length": s.contextLength(req.Model)},
	})
}
