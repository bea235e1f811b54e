package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/credohq/credo/memory"
)

type (
	revertInput struct {
		ID int64 `path:"id" minimum:"1" doc:"Revision event id, from GET /v1/events."`
		// Optional: a revert without a note needs no body.
		Body *RevertRequest
	}
	auditInput struct {
		Scope       string `query:"scope" maxLength:"200" doc:"The scope to audit; give this or scope_prefix. It must start with one of the key's scope prefixes."`
		ScopePrefix string `query:"scope_prefix" maxLength:"200" doc:"Audit every scope starting with this prefix, which the key's prefixes must cover. Without scope and scope_prefix, a key with one prefix audits it."`
		Since       string `query:"since" doc:"Only revisions and refusals made at or after this time (RFC 3339 or a date like 2026-03-20)."`
	}
)

// RevertRequest is an operator's revert of one revision event.
type RevertRequest struct {
	Note string `json:"note,omitempty" maxLength:"2000" doc:"Why the revision was wrong: kept as the revert's excerpt, and shown to later extractions with the negative example."`
}

// registerRevert declares reverting a revision and the audit of revisions.
func (s *Server) registerRevert() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "revertEvent", Method: http.MethodPost, Path: "/v1/events/{id}/revert", Tags: []string{"revisions"},
		Summary: "Revert one applied revision as an operator",
		Description: "Undoes the revision, as `beliefs revert` does: a superseded belief is current again exactly as before and the belief that replaced it is retracted as never true; a retracted belief is current again; a restatement's count and provenance go back. " +
			"The revert is a revision event of its own (action revert, origin operator, reverts naming this event), this event gains reverted_by and reverted_at, beliefs concluded from those involved are flagged for review, and the undone revision becomes a negative few-shot example. " +
			"Only the latest revision of a chain: one that later revisions built on, a revert, or an event reverted already is refused with 409 and the reason, and nothing is changed. Needs the operate right. An event outside the key's scopes is not found, like an unknown id.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType), func(ctx context.Context, in *revertInput) (*output[Reverted], error) {
		var req RevertRequest
		if in.Body != nil {
			req = *in.Body
		}
		return wrap(s.revert(ctx, principalFrom(ctx), in.ID, req))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "audit", Method: http.MethodGet, Path: "/v1/audit", Tags: []string{"revisions"},
		Summary:     "How precise a scope's revisions were",
		Description: "Applied revisions by origin, action and reason, how many an operator reverted or corrected since, each writer's precision (1 - reverted / applied), and the refused revisions with their decisions (open, applied, dismissed), as `beliefs audit` prints. Needs the read right.",
	}, http.StatusBadRequest, http.StatusForbidden), func(ctx context.Context, in *auditInput) (*output[Audit], error) {
		return wrap(s.audit(ctx, principalFrom(ctx), *in))
	})
}

// revert undoes revision event id as an operator, as `beliefs revert` and the
// inspector do, through memory.Store.Revert.
func (s *Server) revert(ctx context.Context, p *Principal, id int64, in RevertRequest) (*Reverted, error) {
	if err := s.need(p, RightOperate); err != nil {
		return nil, err
	}
	got, err := s.ops.Revert(ctx, p, id, in.Note, "API key "+p.Name)
	if err != nil {
		return nil, s.opError(ctx, "event", id, err)
	}
	return revertedOf(got), nil
}

func revertedOf(r *memory.Reverted) *Reverted {
	out := &Reverted{Revert: eventOf(r.Revert), Event: eventOf(r.Event), Restored: r.Restored, Retracted: r.Retracted,
		Unreinforced: r.Unreinforced}
	if out.Restored == nil {
		out.Restored = []int64{}
	}
	if out.Retracted == nil {
		out.Retracted = []int64{}
	}
	return out
}

// audit counts the revisions of a scope or of the scopes under a prefix the key covers.
func (s *Server) audit(ctx context.Context, p *Principal, in auditInput) (*Audit, error) {
	if err := s.need(p, RightRead); err != nil {
		return nil, err
	}
	q := memory.AuditQuery{Scope: in.Scope, ScopePrefix: in.ScopePrefix}
	switch {
	case in.Scope != "" && in.ScopePrefix != "":
		return nil, invalid("give scope or scope_prefix, not both")
	case in.Scope != "":
		if err := s.scope(p, RightRead, in.Scope); err != nil {
			return nil, err
		}
	case in.ScopePrefix != "":
		if err := s.prefix(p, RightRead, in.ScopePrefix); err != nil {
			return nil, err
		}
	case len(p.Scopes) == 1:
		// The key's one prefix is what it may audit; "*" is every scope.
		if p.Scopes[0] != AllScopes {
			q.ScopePrefix = p.Scopes[0]
		}
	default:
		return nil, invalid("give scope or scope_prefix: this key has several scope prefixes")
	}
	since, err := parseTime("since", in.Since)
	if err != nil {
		return nil, err
	}
	q.Since = since
	a, err := s.store.Audit(ctx, q)
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	return auditOf(a), nil
}
