package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/credohq/credo/transcript"
)

const mcpInstructions = `credo is long-term memory that stays true over time. Before answering about the user
(where they live, work, what they prefer), call context with the question and put its text in
your reasoning, or call ask for a short answer that cites its beliefs; recall lists the beliefs
themselves. All three answer questions about the past ("where did they live before?") from
history by itself. After a
conversation worth remembering, call remember with its messages: beliefs are extracted in the
background, and revise what memory held before. Use history to see how one belief changed,
entities to see whom memory knows about (the user, their sister, their employer) and entity for
everything it holds about one of them, by any of their names, and forget when the user asks you
to forget something. Every call names a scope (e.g. user:42) that the API key may access.`

// RememberArgs is the input of the remember tool: one conversation.
type RememberArgs struct {
	Scope      string               `json:"scope" jsonschema:"the memory to write, e.g. user:42; it must start with one of the key's scope prefixes"`
	ID         string               `json:"id,omitempty" jsonschema:"your id for the conversation, optional"`
	OccurredAt *time.Time           `json:"occurred_at,omitempty" jsonschema:"when the conversation happened (RFC 3339 with a zone); default now"`
	Messages   []transcript.Message `json:"messages" jsonschema:"the conversation, in order; role is user, assistant, system or tool"`
}

// RecallArgs is the input of the recall tool.
type RecallArgs struct {
	Scope   string `json:"scope" jsonschema:"the memory to read, e.g. user:42"`
	Query   string `json:"query,omitempty" jsonschema:"the question; the answer is the beliefs nearest to it, from history when it asks about the past. Empty: every current belief"`
	K       int    `json:"k,omitempty" jsonschema:"how many beliefs to rank (default 10, at most 1000)"`
	History bool   `json:"history,omitempty" jsonschema:"include superseded and retracted beliefs even when the question does not read as one about the past"`
	AsOf    string `json:"as_of,omitempty" jsonschema:"what was true in the world at this time (RFC 3339 or a date like 2026-03-20)"`
	KnownAt string `json:"known_at,omitempty" jsonschema:"what memory believed at this time (RFC 3339 or a date)"`
	Inherit bool   `json:"inherit,omitempty" jsonschema:"add the organisation's defaults: the ancestor scopes' beliefs (acme/team/user:1 inherits from acme/team and acme) on the slots this scope does not fill"`
}

// HistoryArgs is the input of the history tool.
type HistoryArgs struct {
	ID int64 `json:"id" jsonschema:"a belief id, as recall answers it"`
}

// ForgetArgs is the input of the forget tool. It never purges, nor forgets a whole
// scope: that is for operators, through the HTTP API or the beliefs command.
type ForgetArgs struct {
	Scope string  `json:"scope" jsonschema:"the memory, e.g. user:42"`
	IDs   []int64 `json:"ids,omitempty" jsonschema:"forget these beliefs"`
	Match string  `json:"match,omitempty" jsonschema:"forget every belief whose statement, quote, subject or attribute contains this text, ignoring case"`
	// Entity is "forget everything about my ex": one name, whatever each belief's words.
	Entity string `json:"entity,omitempty" jsonschema:"forget every belief about this entity, by its name or an alias, as the entities tool lists them"`
}

// MCPServer returns an MCP server whose tools act for the principal that principal
// returns on each call: remember (write), recall, history, context, ask, entities and entity
// (read), forget (operate, soft only).
func (s *Server) MCPServer(principal func(context.Context) (*Principal, error)) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "credo", Title: "credo memory", Version: Version},
		&mcp.ServerOptions{Instructions: mcpInstructions, SchemaCache: s.schemas})
	call := func(ctx context.Context) (*Principal, error) {
		p, err := principal(ctx)
		if err != nil {
			return nil, s.asError(ctx, err)
		}
		return p, nil
	}

	addTool(srv, call, &mcp.Tool{
		Name: "remember", Title: "Remember a conversation",
		Description: "Store a conversation in memory. Beliefs are extracted from it in the background and revise what memory held before; the answer has the episode id. The same conversation twice is stored once.",
	}, func(ctx context.Context, p *Principal, in RememberArgs) (*Enqueued, error) {
		if err := s.need(p, RightWrite); err != nil {
			return nil, err
		}
		t := transcript.Transcript{Scope: in.Scope, ID: in.ID, OccurredAt: in.OccurredAt, Messages: in.Messages}
		if err := t.Validate(s.now(), transcript.DefaultLimits()); err != nil {
			return nil, invalid(err.Error())
		}
		return s.enqueue(ctx, p, []transcript.Transcript{t})
	})

	addTool(srv, call, &mcp.Tool{
		Name: "recall", Title: "Recall beliefs",
		Description: "What memory believes now about a question, nearest first. A question about the past (\"used to\", \"before\", \"previously\") is answered from history: superseded beliefs with what replaced them and when.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, p *Principal, in RecallArgs) (*Beliefs, error) {
		return s.recall(ctx, p, RecallRequest{Scope: in.Scope, Query: in.Query, K: in.K, All: in.History, AsOf: in.AsOf, KnownAt: in.KnownAt, Inherit: in.Inherit})
	})

	addTool(srv, call, &mcp.Tool{
		Name: "history", Title: "History of a belief",
		Description: "How one belief came to be: the chain of beliefs it replaced and that replaced it, oldest first, with their valid times.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, p *Principal, in HistoryArgs) (*History, error) {
		return s.history(ctx, p, in.ID)
	})

	destructive := true
	addTool(srv, call, &mcp.Tool{
		Name: "forget", Title: "Forget beliefs",
		Description: "Forget beliefs the user wants forgotten, by id, by text or by whom they are about: they leave every answer and prompt (kept for audit only). Give ids, match or entity.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive},
	}, func(ctx context.Context, p *Principal, in ForgetArgs) (*Forgotten, error) {
		return s.forget(ctx, p, ForgetRequest{Scope: in.Scope, IDs: in.IDs, Match: in.Match, Entity: in.Entity})
	})
	s.addReadTools(srv, call)
	s.addEntityTools(srv, call)
	return srv
}

// addTool adds an MCP tool that acts for the principal of each call: when call finds
// none, the call ends with its error and do does not run.
func addTool[In, Out any](srv *mcp.Server, call func(context.Context) (*Principal, error), t *mcp.Tool, do func(ctx context.Context, p *Principal, in In) (Out, error)) {
	mcp.AddTool(srv, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		p, err := call(ctx)
		if err != nil {
			var none Out
			return nil, none, err
		}
		out, err := do(ctx, p, in)
		return nil, out, err
	})
}

// ServeMCP serves the MCP tools over t (stdio, for desktop agents) for the key token
// until the client goes away or ctx ends. The key is checked at start and again on
// every call, so that revoking it takes effect at once.
func (s *Server) ServeMCP(ctx context.Context, t mcp.Transport, token string) error {
	principal := func(ctx context.Context) (*Principal, error) {
		p, err := Authenticate(ctx, s.pool, token)
		if errors.Is(err, ErrInvalidKey) {
			return nil, unauthorized("the API key is not valid, or was revoked")
		}
		return p, err
	}
	if _, err := principal(ctx); err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return s.MCPServer(principal).Run(ctx, t)
}
