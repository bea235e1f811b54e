package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm"
)

// CheckModels asks each model server whether it can run CHAT_MODEL and EMBED_MODEL, so
// that a first run without a model says what to fix instead of retrying for hours, and
// returns the chat model's window, for the worker to say which it will use. An
// OpenAI-compatible server that lists no models (no /v1/models) is taken at its word.
func CheckModels(ctx context.Context, cfg *config.Config) (llm.Window, error) {
	if err := checkModels(ctx, cfg); err != nil {
		return llm.Window{}, err
	}
	p, err := provider(cfg, cfg.LLMProvider)
	if err != nil {
		return llm.Window{}, err
	}
	w, err := p.ChatWindow(ctx)
	if err != nil {
		return llm.Window{}, serverError(cfg, cfg.LLMProvider, err)
	}
	return w, nil
}

func checkModels(ctx context.Context, cfg *config.Config) error {
	listed := map[string][]string{}
	for _, n := range []struct{ provider, model, variable string }{
		{cfg.LLMProvider, cfg.ChatModel, "CHAT_MODEL"},
		{cfg.EmbedProvider, cfg.EmbedModel, "EMBED_MODEL"},
	} {
		models, ok := listed[n.provider]
		if !ok {
			p, err := provider(cfg, n.provider)
			if err != nil {
				return err
			}
			lister, ok := p.(llm.ModelLister)
			if !ok {
				continue
			}
			if models, err = lister.Models(ctx); err != nil && !notListed(err) {
				return serverError(cfg, n.provider, err)
			}
			listed[n.provider] = models
		}
		if models != nil && !llm.HasModel(models, n.model) {
			return missingModel(cfg, n.provider, n.model, n.variable, models)
		}
	}
	return nil
}

// notListed says the server has no model list: many OpenAI-compatible servers don't.
func notListed(err error) bool {
	var se *llm.StatusError
	return errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusMethodNotAllowed)
}

// where names a provider's server and the variable that sets it.
func where(cfg *config.Config, provider string) (url, variable string) {
	if provider == llm.ProviderOpenAI {
		return cfg.OpenAIBaseURL, "OPENAI_BASE_URL"
	}
	return cfg.OllamaHost, "OLLAMA_HOST"
}

func serverError(cfg *config.Config, provider string, err error) error {
	url, variable := where(cfg, provider)
	var se *llm.StatusError
	if errors.As(err, &se) && (se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden) {
		return fmt.Errorf("the model server at %s refused the API key: set OPENAI_API_KEY (%w)", url, err)
	}
	return fmt.Errorf("no model server answers at %s: start it, or set %s (%w)", url, variable, err)
}

func missingModel(cfg *config.Config, provider, model, variable string, models []string) error {
	url, _ := where(cfg, provider)
	if provider == llm.ProviderOllama {
		return fmt.Errorf("%s %q is not pulled on the Ollama server at %s: run `ollama pull %s`, or set %s to one of: %s",
			variable, model, url, model, variable, list(models))
	}
	return fmt.Errorf("%s %q is not among the models of the server at %s: set %s to one of: %s", variable, model, url, variable, list(models))
}

func list(models []string) string {
	if len(models) == 0 {
		return "(none)"
	}
	if len(models) > 10 {
		return strings.Join(models[:10], ", ") + fmt.Sprintf(" and %d more", len(models)-10)
	}
	return strings.Join(models, ", ")
}
