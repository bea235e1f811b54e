package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// The entity registry of a scope: whom its beliefs are about, read by name or alias, and
// an operator's merge of two names that are one entity.

// Entity is one entity of a scope's registry.
type Entity struct {
	Scope          string    `json:"scope"`
	Key            string    `json:"key" doc:"The normalised name beliefs point at (a belief's entity): user for the user."`
	Name           string    `json:"name" doc:"The name as it was first said, e.g. sister or Sarah."`
	Kind           string    `json:"kind" enum:"user,person,organisation,place,thing,other" doc:"other: nothing has said the kind yet."`
	Aliases        []string  `json:"aliases" nullable:"false" doc:"The other names it goes by, as said, in the order learned; any of them finds it."`
	CurrentBeliefs int       `json:"current_beliefs" doc:"Its current (active) beliefs."`
	CreatedAt      time.Time `json:"created_at"`
}

func entityOf(e memory.Entity) Entity {
	aliases := e.Aliases
	if aliases == nil {
		aliases = []string{}
	}
	return Entity{Scope: e.Scope, Key: e.Key, Name: e.Name, Kind: string(e.Kind), Aliases: aliases,
		CurrentBeliefs: e.CurrentBeliefs, CreatedAt: e.CreatedAt}
}

// Entities answers GET /v1/entities.
type Entities struct {
	Entities   []Entity `json:"entities" nullable:"false" doc:"The user first, then by name."`
	ScopeKnown bool     `json:"scope_known" required:"false" doc:"false when memory has never held an episode or a belief of the scope: most likely a misspelt scope, read as empty."`
	DidYouMean string   `json:"did_you_mean,omitempty" doc:"With scope_known false, the scope this key may read that is nearest to the one asked, when one is a few edits away."`
}

// Slot is one slot (attribute) of an entity.
type Slot struct {
	Attribute string   `json:"attribute" doc:"The slot, e.g. home_city."`
	Current   []Belief `json:"current" nullable:"false" doc:"Its current beliefs."`
	History   []Belief `json:"history,omitempty" nullable:"false" doc:"With history=true, every belief the slot held but forgotten ones, oldest first; absent when that is only the current ones."`
}

// EntityView answers GET /v1/entities/{name}: one entity with its beliefs by slot.
type EntityView struct {
	Entity
	Slots []Slot `json:"slots" nullable:"false" doc:"Its slots, in the order of their first belief."`
}

func entityViewOf(v memory.EntityView) EntityView {
	return EntityView{Entity: entityOf(v.Entity), Slots: mapped(v.Slots, func(s memory.Slot) Slot {
		out := Slot{Attribute: s.Attribute, Current: beliefsOf(s.Current)}
		if len(s.History) > 0 {
			out.History = beliefsOf(s.History)
		}
		return out
	})}
}

// MergeRequest is an operator's decision that two names of a scope are one entity.
type MergeRequest struct {
	Scope string `json:"scope" minLength:"1" maxLength:"200" doc:"The scope of both entities."`
	Into  string `json:"into" minLength:"1" maxLength:"200" doc:"The entity that stays, by name or alias (user for the user)."`
	Other string `json:"other" minLength:"1" maxLength:"200" doc:"The entity merged into it, by name or alias: its names become aliases of into, its beliefs into's. Never the user."`
	Note  string `json:"note,omitempty" maxLength:"2000" doc:"Why; kept on the same_entity review items the merge closes."`
}

// Merged answers POST /v1/entities/merge.
type Merged struct {
	Entity EntityView `json:"entity" doc:"The entity that stayed, with its current beliefs."`
	Moved  int64      `json:"moved" doc:"Beliefs that are now its, other's before."`
	Closed []int64    `json:"closed_items" nullable:"false" doc:"The open same_entity review items about the pair, closed as applied."`
}

type (
	entitiesInput struct {
		Scope string `query:"scope" required:"true" minLength:"1" maxLength:"200" doc:"The scope to read, e.g. user:42; it must start with one of the key's scope prefixes."`
	}
	entityInput struct {
		Name    string `path:"name" minLength:"1" maxLength:"200" doc:"The entity's name or any of its aliases, ignoring case and the user's possessive (user's sister, my sister and Sister are one); path-escaped."`
		Scope   string `query:"scope" required:"true" minLength:"1" maxLength:"200" doc:"The scope to read, e.g. user:42; it must start with one of the key's scope prefixes."`
		History bool   `query:"history" doc:"Add each slot's history: every belief it held but forgotten ones, oldest first."`
	}
	mergeInput struct {
		Body MergeRequest
	}
)

// registerEntities declares the reads of a scope's entity registry and the merge.
func (s *Server) registerEntities() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "listEntities", Method: http.MethodGet, Path: "/v1/entities", Tags: []string{"entities"},
		Summary:     "The entities of a scope: whom its beliefs are about",
		Description: "Each with its name, kind, aliases and count of current beliefs, the user first, as `beliefs entities` lists them. Needs the read right.",
	}, http.StatusBadRequest, http.StatusForbidden), func(ctx context.Context, in *entitiesInput) (*output[Entities], error) {
		return wrap(s.entities(ctx, principalFrom(ctx), in.Scope))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "getEntity", Method: http.MethodGet, Path: "/v1/entities/{name}", Tags: []string{"entities"},
		Summary:     "One entity, found by name or alias, with its beliefs by slot",
		Description: "Its current beliefs by slot and, with history=true, each slot's chain, oldest first, as `beliefs entity` shows it. A name the scope knows no entity by is not found, and the message names the nearest known name. Needs the read right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), func(ctx context.Context, in *entityInput) (*output[EntityView], error) {
		return wrap(s.entity(ctx, principalFrom(ctx), in.Scope, in.Name, in.History))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "mergeEntities", Method: http.MethodPost, Path: "/v1/entities/merge", Tags: []string{"entities"},
		Summary:     "Merge two entities of a scope that are one, as an operator",
		Description: "other's names become aliases of into and its beliefs into's; nothing else changes (no belief is revised), as `beliefs entities merge` does. Open same_entity review items about the pair close as applied. The same entity twice, or the user as other, is a 400; a name of neither is not found, with the nearest known name. Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnsupportedMediaType), func(ctx context.Context, in *mergeInput) (*output[Merged], error) {
		return wrap(s.mergeEntities(ctx, principalFrom(ctx), in.Body))
	})
}

func (s *Server) entities(ctx context.Context, p *Principal, scope string) (*Entities, error) {
	if err := s.scope(p, RightRead, scope); err != nil {
		return nil, err
	}
	es, err := s.ops.Entities(ctx, p, scope)
	if err != nil {
		return nil, s.entityError(ctx, err)
	}
	out := &Entities{Entities: mapped(es, entityOf)}
	if out.ScopeKnown, out.DidYouMean, err = s.scopeKnown(ctx, p, scope, false, len(es)); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Server) entity(ctx context.Context, p *Principal, scope, name string, history bool) (*EntityView, error) {
	if err := s.scope(p, RightRead, scope); err != nil {
		return nil, err
	}
	if err := checkName("name", name); err != nil {
		return nil, err
	}
	v, err := s.ops.Entity(ctx, p, scope, name, history)
	if err != nil {
		return nil, s.entityError(ctx, err)
	}
	out := entityViewOf(*v)
	return &out, nil
}

func (s *Server) mergeEntities(ctx context.Context, p *Principal, in MergeRequest) (*Merged, error) {
	if err := s.scope(p, RightOperate, in.Scope); err != nil {
		return nil, err
	}
	for _, c := range []struct{ field, name string }{{"into", in.Into}, {"other", in.Other}} {
		if err := checkName(c.field, c.name); err != nil {
			return nil, err
		}
	}
	if err := checkInput(transcript.CheckText("note", in.Note, memory.MaxNoteLen)); err != nil {
		return nil, err
	}
	got, err := s.ops.MergeEntities(ctx, p, memory.Merge{Scope: in.Scope, Into: in.Into, Other: in.Other, Note: in.Note})
	if err != nil {
		return nil, s.entityError(ctx, err)
	}
	closed := got.Closed
	if closed == nil {
		closed = []int64{}
	}
	return &Merged{Entity: entityViewOf(got.Entity), Moved: got.Moved, Closed: closed}, nil
}

// checkName holds an entity's name, as a request gives it, to the rule every surface
// applies to free text; the store then applies the registry's own (entity.CheckName).
func checkName(field, name string) error {
	return checkInput(transcript.CheckText(field, name, entity.MaxNameLen))
}

// entityError answers an error of the registry: a name the scope knows no entity by is
// not found, with the nearest name it does know; the rest as any operator's error.
func (s *Server) entityError(ctx context.Context, err error) error {
	if unknown, ok := errors.AsType[*memory.UnknownEntityError](err); ok {
		return newError(http.StatusNotFound, CodeNotFound, unknown.Error())
	}
	return s.opError(ctx, "entity", 0, err)
}

// EntitiesArgs is the input of the entities tool.
type EntitiesArgs struct {
	Scope string `json:"scope" jsonschema:"the memory to read, e.g. user:42"`
}

// EntityArgs is the input of the entity tool.
type EntityArgs struct {
	Scope   string `json:"scope" jsonschema:"the memory to read, e.g. user:42"`
	Name    string `json:"name" jsonschema:"the entity's name or an alias, e.g. user, sister, my sister or Sarah"`
	History bool   `json:"history,omitempty" jsonschema:"add each slot's history: every belief it held, oldest first"`
}

// addEntityTools adds the MCP tools that read a scope's entity registry.
func (s *Server) addEntityTools(srv *mcp.Server, call func(context.Context) (*Principal, error)) {
	addTool(srv, call, &mcp.Tool{
		Name: "entities", Title: "Whom memory knows about",
		Description: "The people, organisations, places and things memory holds beliefs about (the user first), each with its kind, the other names it goes by and how many current beliefs it has.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, p *Principal, in EntitiesArgs) (*Entities, error) {
		return s.entities(ctx, p, in.Scope)
	})
	addTool(srv, call, &mcp.Tool{
		Name: "entity", Title: "Everything about one entity",
		Description: "What memory holds about one entity, found by its name or any alias (\"my sister\", \"Sarah\"): its current beliefs by slot and, with history, what each slot held before. An unknown name's error suggests the nearest known one.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, p *Principal, in EntityArgs) (*EntityView, error) {
		return s.entity(ctx, p, in.Scope, in.Name, in.History)
	})
}
