package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/credohq/credo/llm"
)

type ollamaChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Stream  *bool                      `json:"stream"`
	Format  json.RawMessage            `json:"format"`
	Options map[string]json.RawMessage `json:"options"`
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
	for _, m := range in.Messages {
		req.Messages = append(req.Messages, llm.Message{Role: m.Role, Content: m.Content})
	}
	req.Prompt = joinPrompt(req.Messages)

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
	promptTokens, completionTokens := usage(reply, req.Prompt, reply.Content)
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
	Model string          `json:"model"`
	Input json.RawMessage `json:"input"`
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

	req.Status = http.StatusOK
	s.record(req)
	vecs := make([][]float32, len(inputs))
	tokens := 0
	for i, text := range inputs {
		vecs[i] = s.embed(text)
		tokens += len(text) / 4
	}
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
