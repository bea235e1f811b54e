package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/recall"
	"github.com/credohq/credo/transcript"
)

// The agent's read side: a context block for a prompt, and answers with citations.

// ContextAnswer answers GET /v1/context.
type ContextAnswer struct {
	Context    string   `json:"context" doc:"A text block for an agent's prompt: what holds, one belief a line with the date it holds from; for a question about the past, what no longer holds, with its valid interval."`
	Mode       string   `json:"mode" enum:"current,history,as_of"`
	Beliefs    []Belief `json:"beliefs" nullable:"false" doc:"The beliefs shown, in the block's order."`
	ScopeKnown bool     `json:"scope_known" required:"false" doc:"false when memory has never held an episode or a belief of the scope (with inherit, nor of any ancestor): most likely a misspelt scope, read as empty."`
	DidYouMean string   `json:"did_you_mean,omitempty" doc:"With scope_known false, the scope this key may read that is nearest to the one asked, when one is a few edits away."`
}

// AskRequest is a question to memory.
type AskRequest struct {
	Scope    string `json:"scope" minLength:"1" maxLength:"200"`
	Question string `json:"question" minLength:"1" maxLength:"2000"`
	Inherit  bool   `json:"inherit,omitempty" doc:"Add the organisation's defaults from the ancestor scopes."`
}

// AskAnswer answers POST /v1/ask.
type AskAnswer struct {
	Answer     string   `json:"answer"`
	Citations  []int64  `json:"citations" nullable:"false" doc:"Ids of the beliefs the answer rests on, among beliefs."`
	Beliefs    []Belief `json:"beliefs" nullable:"false" doc:"The beliefs the model was shown."`
	ScopeKnown bool     `json:"scope_known" required:"false" doc:"false when memory has never held an episode or a belief of the scope (with inherit, nor of any ancestor): most likely a misspelt scope, read as empty."`
	DidYouMean string   `json:"did_you_mean,omitempty" doc:"With scope_known false, the scope this key may read that is nearest to the one asked, when one is a few edits away."`
}

type contextInput struct {
	Scope   string `query:"scope" required:"true" minLength:"1" maxLength:"200" doc:"The scope to read."`
	Query   string `query:"query" maxLength:"2000" doc:"The question or topic: ranks by similarity; a question about the past adds what no longer holds."`
	K       int    `query:"k" minimum:"1" maximum:"100" doc:"At most this many beliefs per section (default 10)."`
	Budget  int    `query:"budget" minimum:"1" maximum:"100000" doc:"At most this many characters (default 4000)."`
	Inherit bool   `query:"inherit" doc:"Add the organisation's defaults from the ancestor scopes."`
	AsOf    string `query:"as_of" doc:"What was true at this time (RFC 3339 or a date)."`
}

type askInput struct {
	Body AskRequest
}

func (s *Server) registerRead() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "getContext", Method: http.MethodGet, Path: "/v1/context", Tags: []string{"read"},
		Summary:     "What memory holds, as a text block ready for a prompt",
		Description: "Ranked by similarity to the query, recency and reinforcement, bounded by k and budget, as `beliefs context` does. Needs the read right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusBadGateway), func(ctx context.Context, in *contextInput) (*output[ContextAnswer], error) {
		return wrap(s.context(ctx, principalFrom(ctx), in))
	})
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "ask", Method: http.MethodPost, Path: "/v1/ask", Tags: []string{"read"},
		Summary:     "Answer a question from memory, citing the beliefs it rests on",
		Description: "One chat call over the recalled beliefs, as `beliefs ask` does; an empty memory is answered without one. Needs the read right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusUnsupportedMediaType, http.StatusBadGateway), func(ctx context.Context, in *askInput) (*output[AskAnswer], error) {
		return wrap(s.ask(ctx, principalFrom(ctx), in.Body))
	})
}

func (s *Server) context(ctx context.Context, p *Principal, in *contextInput) (*ContextAnswer, error) {
	if err := s.scope(p, RightRead, in.Scope); err != nil {
		return nil, err
	}
	q := recall.Query{Scope: in.Scope, Query: in.Query, K: in.K, Budget: in.Budget, Inherit: in.Inherit, Sees: p.Sees}
	var err error
	if q.AsOf, err = parseTime("as_of", in.AsOf); err != nil {
		return nil, err
	}
	got, err := s.reader.Context(ctx, q)
	if err != nil {
		return nil, s.readError(ctx, err)
	}
	out := &ContextAnswer{Context: got.Text, Mode: string(got.Mode), Beliefs: beliefsOf(got.Beliefs)}
	if out.ScopeKnown, out.DidYouMean, err = s.scopeKnown(ctx, p, in.Scope, in.Inherit, len(got.Beliefs)); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Server) ask(ctx context.Context, p *Principal, in AskRequest) (*AskAnswer, error) {
	if err := s.scope(p, RightRead, in.Scope); err != nil {
		return nil, err
	}
	got, err := s.reader.Ask(ctx, recall.Query{Scope: in.Scope, Query: in.Question, Inherit: in.Inherit, Sees: p.Sees})
	if err != nil {
		return nil, s.readError(ctx, err)
	}
	out := &AskAnswer{Answer: got.Answer, Citations: got.Citations, Beliefs: beliefsOf(got.Beliefs)}
	if out.ScopeKnown, out.DidYouMean, err = s.scopeKnown(ctx, p, in.Scope, in.Inherit, len(got.Beliefs)); err != nil {
		return nil, err
	}
	return out, nil
}

// readError maps a read-side failure: a bad query is the caller's, a model that failed
// to answer (or to answer validly) is a bad gateway.
func (s *Server) readError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, recall.ErrQuery):
		if msg, ok := transcript.InputMessage(err); ok {
			return invalid(msg)
		}
	case errors.Is(err, recall.ErrEmbedding):
		s.log.ErrorContext(ctx, "api: embed query", "error", err)
		return newError(http.StatusBadGateway, CodeEmbeddingFailed, "the embedding model did not answer; try again")
	case errors.Is(err, recall.ErrModel):
		s.log.ErrorContext(ctx, "api: answer", "error", llm.LogKind(err, "see the debug log"))
		s.log.DebugContext(ctx, "api: answer", "error", err)
		return newError(http.StatusBadGateway, CodeModelFailed, "the chat model did not give a valid answer; try again")
	}
	return s.internal(ctx, err)
}

// addReadTools adds the MCP tools of the read side.
func (s *Server) addReadTools(srv *mcp.Server, call func(context.Context) (*Principal, error)) {
	addTool(srv, call, &mcp.Tool{
		Name: "context", Title: "Memory for the prompt",
		Description: "What memory holds about the user, as a text block to put in your prompt: one belief a line with the date it holds from, the most relevant to the query first. A question about the past adds what no longer holds, with when it held.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, p *Principal, in ContextArgs) (*ContextAnswer, error) {
		return s.context(ctx, p, &contextInput{Scope: in.Scope, Query: in.Query, K: in.K, Inherit: in.Inherit, AsOf: in.AsOf})
	})
	addTool(srv, call, &mcp.Tool{
		Name: "ask", Title: "Ask memory",
		Description: "A short answer to a question about the user from memory, with the ids of the beliefs it rests on. Says so when memory holds nothing.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, p *Principal, in AskRequest) (*AskAnswer, error) {
		return s.ask(ctx, p, in)
	})
}

// ContextArgs is the input of the context tool.
type ContextArgs struct {
	Scope   string `json:"scope" jsonschema:"the memory to read, e.g. user:42"`
	Query   string `json:"query,omitempty" jsonschema:"the question or topic at hand; empty: the most recent and most repeated beliefs"`
	K       int    `json:"k,omitempty" jsonschema:"at most this many beliefs (default 10, at most 100)"`
	Inherit bool   `json:"inherit,omitempty" jsonschema:"add the organisation's defaults from the ancestor scopes"`
	AsOf    string `json:"as_of,omitempty" jsonschema:"what was true at this time (RFC 3339 or a date)"`
}
