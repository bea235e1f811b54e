package llmtest

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/credohq/credo/llm"
)

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Body: body, At: time.Now(), Traceparent: r.Header.Get("Traceparent")}

	switch r.Method + " " + r.URL.Path {
	case "POST /v1/chat/completions":
		s.openAIChat(w, r, req)
	case "POST /v1/embeddings":
		s.openAIEmbed(w, r, req)
	case "GET /v1/models":
		req.Provider, req.Kind = llm.ProviderOpenAI, KindModels
		s.meta(w, r, req, s.openAIModels())
	case "POST /api/chat":
		s.ollamaChat(w, r, req)
	case "POST /api/embed":
		s.ollamaEmbed(w, r, req)
	case "POST /api/show":
		s.ollamaShow(w, r, req)
	case "GET /api/tags":
		req.Provider, req.Kind = llm.ProviderOllama, KindModels
		s.meta(w, r, req, s.ollamaTags())
	case "GET /api/version":
		req.Provider, req.Kind = llm.ProviderOllama, KindVersion
		s.meta(w, r, req, map[string]string{"version": "0.0.0-llmtest"})
	case "GET /", "HEAD /":
		req.Provider, req.Kind = llm.ProviderOllama, KindRoot
		req.Status = http.StatusOK
		s.record(req)
		if s.wait(r.Context(), s.latency) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "Ollama is running")
		}
	default:
		req.Status = http.StatusNotFound
		s.record(req)
		http.Error(w, fmt.Sprintf("llmtest: no route for %s %s", r.Method, r.URL.Path), http.StatusNotFound)
	}
}

func (s *Server) meta(w http.ResponseWriter, r *http.Request, req Request, answer any) {
	req.Status = http.StatusOK
	s.record(req)
	if s.wait(r.Context(), s.latency) {
		writeJSON(w, http.StatusOK, answer)
	}
}

// badRequest records req as answered with 400 Bad Request and writes the
// provider-shaped error body.
func (s *Server) badRequest(w http.ResponseWriter, req Request, msg string) {
	req.Status = http.StatusBadRequest
	s.record(req)
	writeError(w, req.Provider, http.StatusBadRequest, msg)
}

func writeError(w http.ResponseWriter, provider string, status int, msg string) {
	if provider == llm.ProviderOllama {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	writeJSON(w, status, openAIErrorBody{Error: openAIError{Message: msg, Type: openAIErrorType(status), Code: status}})
}

func scriptedErrorMessage(status int) string {
	return fmt.Sprintf("llmtest: scripted %d %s", status, http.StatusText(status))
}
