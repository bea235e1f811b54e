package llm

import (
	"context"
	"strings"
)

// ModelLister lists the models a server can run: Ollama's pulled models (/api/tags),
// an OpenAI-compatible server's /v1/models.
type ModelLister interface {
	Models(ctx context.Context) ([]string, error)
}

// Models lists the models pulled on the Ollama server.
func (p *Ollama) Models(ctx context.Context) ([]string, error) {
	res, err := p.client.List(ctx)
	if err != nil {
		return nil, wrapErr(ctx, ProviderOllama, "list models", err)
	}
	out := make([]string, 0, len(res.Models))
	for _, m := range res.Models {
		out = append(out, m.Name)
	}
	return out, nil
}

// Models lists the models the OpenAI-compatible server announces.
func (p *OpenAI) Models(ctx context.Context) ([]string, error) {
	res, err := p.client.ListModels(ctx)
	if err != nil {
		return nil, wrapErr(ctx, ProviderOpenAI, "list models", err)
	}
	out := make([]string, 0, len(res.Models))
	for _, m := range res.Models {
		out = append(out, m.ID)
	}
	return out, nil
}

// HasModel says whether model is among models; Ollama's names carry a tag, ":latest"
// when none was given.
func HasModel(models []string, model string) bool {
	for _, m := range models {
		if m == model || strings.TrimSuffix(m, ":latest") == strings.TrimSuffix(model, ":latest") {
			return true
		}
	}
	return false
}
