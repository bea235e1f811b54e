package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transcript"
)

type (
	putPolicyInput struct {
		Body PolicyRequest
	}
	getPoliciesInput struct {
		Scope string `query:"scope" maxLength:"200" doc:"Answer the policy in force in this scope (the one of its longest prefix), if any, instead of every policy within the key's prefixes. It must start with one of the key's scope prefixes."`
	}
	deletePolicyInput struct {
		ScopePrefix string `query:"scope_prefix" required:"true" maxLength:"200" doc:"The prefix whose policy to unset; it must start with one of the key's scope prefixes."`
	}
)

// PolicyRequest sets an organisation's policy: it replaces the one of its prefix, and
// what it leaves out is unset.
type PolicyRequest struct {
	ScopePrefix    string          `json:"scope_prefix" maxLength:"200" doc:"Every scope starting with this prefix is governed by the policy, unless a longer prefix has one; end it with a separator (acme/). It must start with one of the key's scope prefixes; an empty prefix (every scope) needs a key for *."`
	Instructions   string          `json:"instructions,omitempty" maxLength:"2000" doc:"What to tell extraction and consolidation of the scopes' conversations (at most 2,000 characters), in a section of their prompts that says it comes from the operator: what to keep, what never to keep."`
	RedactPatterns []PolicyPattern `json:"redact_patterns,omitempty" maxItems:"20" doc:"Secrets of the organisation's own, redacted beside the kinds: each match is replaced by [redacted NAME]."`
	Redact         []string        `json:"redact,omitempty" doc:"The kinds of secret redacted in the scopes: card, iban, api_key, token, private_key, password; all; or none. Absent: the deployment's (REDACT)."`
}

// PolicyPattern is an organisation's pattern of a secret.
type PolicyPattern struct {
	Name  string `json:"name" minLength:"1" maxLength:"40" pattern:"^[a-z][a-z0-9_]*$" doc:"Names the placeholder: employee_id is replaced by [redacted employee id]."`
	Regex string `json:"regex" minLength:"1" maxLength:"500" doc:"A regular expression in Go's RE2 syntax (no backreferences or lookaround; linear time), that matches no empty text."`
}

// Policy is an organisation's policy as stored.
type Policy struct {
	ScopePrefix    string          `json:"scope_prefix" doc:"The prefix it governs."`
	Instructions   string          `json:"instructions"`
	RedactPatterns []PolicyPattern `json:"redact_patterns" nullable:"false"`
	Redact         *string         `json:"redact" doc:"The kinds of secret redacted, joined by commas, or all, or none; null: the deployment's (REDACT)."`
	UpdatedAt      time.Time       `json:"updated_at"`
}

// Policies answers GET /v1/policies.
type Policies struct {
	Scope    *string  `json:"scope,omitempty" doc:"The scope asked about, if any."`
	Policies []Policy `json:"policies" nullable:"false" doc:"Without scope, every policy whose prefix is within the key's, by prefix; with scope, the one in force there (its scope_prefix says where it comes from), or none."`
}

// PolicyOf is the answer for a stored policy.
func PolicyOf(p *memory.Policy) Policy {
	out := Policy{ScopePrefix: p.ScopePrefix, Instructions: p.Instructions, RedactPatterns: []PolicyPattern{}, UpdatedAt: p.UpdatedAt}
	for _, pt := range p.Patterns {
		out.RedactPatterns = append(out.RedactPatterns, PolicyPattern(pt))
	}
	if p.Redact != nil {
		kinds := p.Redact.String()
		out.Redact = &kinds
	}
	return out
}

// registerPolicies declares the organisations' policies.
func (s *Server) registerPolicies() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "setPolicy", Method: http.MethodPut, Path: "/v1/policies", Tags: []string{"policies"},
		Summary: "Set the policy of a scope prefix",
		Description: "Replaces the policy of scope_prefix, as `beliefs policy set` does: its instructions reach the extraction and consolidation prompts of every scope under it, its kinds and patterns redact what is enqueued there afterwards (`beliefs policy apply` redacts what is stored already). " +
			"A scope's policy is the one of its longest prefix. A pattern that is not valid RE2, matches empty text or is too large is refused with 400, and nothing is stored. Needs the operate right, and a prefix within the key's.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusUnsupportedMediaType), func(ctx context.Context, in *putPolicyInput) (*output[Policy], error) {
		return wrap(s.setPolicy(ctx, principalFrom(ctx), in.Body))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "getPolicies", Method: http.MethodGet, Path: "/v1/policies", Tags: []string{"policies"},
		Summary:     "The policies within the key's prefixes, or the one in force in a scope",
		Description: "As `beliefs policy show`. Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden), func(ctx context.Context, in *getPoliciesInput) (*output[Policies], error) {
		return wrap(s.policies(ctx, principalFrom(ctx), in.Scope))
	})

	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "unsetPolicy", Method: http.MethodDelete, Path: "/v1/policies", Tags: []string{"policies"},
		Summary:     "Unset the policy of a scope prefix",
		Description: "As `beliefs policy unset`: the scopes under it are governed by the policy of a shorter prefix, if any. Answers the policy removed; 404 when the prefix has none. Needs the operate right, and a prefix within the key's.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), func(ctx context.Context, in *deletePolicyInput) (*output[Policy], error) {
		return wrap(s.unsetPolicy(ctx, principalFrom(ctx), in.ScopePrefix))
	})
}

func (s *Server) setPolicy(ctx context.Context, p *Principal, req PolicyRequest) (*Policy, error) {
	if err := s.prefix(p, RightOperate, req.ScopePrefix); err != nil {
		return nil, err
	}
	pol := memory.Policy{ScopePrefix: req.ScopePrefix, Instructions: req.Instructions}
	for _, pt := range req.RedactPatterns {
		pol.Patterns = append(pol.Patterns, redact.Pattern(pt))
	}
	if req.Redact != nil {
		set, err := redact.ParseSet(strings.Join(req.Redact, ","))
		if err != nil {
			return nil, invalid("redact: " + err.Error())
		}
		if err := s.redactFloor(p, set); err != nil {
			return nil, err
		}
		pol.Redact = &set
	}
	stored, err := s.store.SetPolicy(ctx, pol)
	if msg, ok := transcript.InputMessage(err); ok {
		return nil, invalid(msg)
	}
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	out := PolicyOf(stored)
	return &out, nil
}

func (s *Server) policies(ctx context.Context, p *Principal, scope string) (*Policies, error) {
	if scope != "" {
		if err := s.scope(p, RightOperate, scope); err != nil {
			return nil, err
		}
		pol, err := s.store.PolicyFor(ctx, scope)
		if err != nil {
			return nil, s.internal(ctx, err)
		}
		out := &Policies{Scope: &scope, Policies: []Policy{}}
		if pol != nil {
			out.Policies = append(out.Policies, PolicyOf(pol))
		}
		return out, nil
	}
	if err := s.need(p, RightOperate); err != nil {
		return nil, err
	}
	all, err := s.store.Policies(ctx)
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	out := &Policies{Policies: []Policy{}}
	for _, pol := range all {
		if p.Sees(pol.ScopePrefix) {
			out.Policies = append(out.Policies, PolicyOf(pol))
		}
	}
	return out, nil
}

func (s *Server) unsetPolicy(ctx context.Context, p *Principal, prefix string) (*Policy, error) {
	if err := s.prefix(p, RightOperate, prefix); err != nil {
		return nil, err
	}
	removed, err := s.store.DeletePolicy(ctx, prefix)
	if errors.Is(err, memory.ErrNotFound) {
		return nil, newError(http.StatusNotFound, CodeNotFound, "no policy for the prefix "+strconv.Quote(prefix))
	}
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	out := PolicyOf(removed)
	return &out, nil
}

// redactFloor refuses a tenant's policy that would redact less than the deployment: a key
// limited to some scope prefixes may add kinds of secret to REDACT's, not remove any,
// since what its users paste is the deployment's to protect. A key that sees every
// scope speaks for the deployment, as the CLI does.
func (s *Server) redactFloor(p *Principal, set redact.Set) error {
	if p.Sees("") {
		return nil
	}
	base := s.redact
	if base == nil {
		base = redact.Default()
	}
	var missing []string
	for _, k := range base.Set() {
		if !set.Has(k) {
			missing = append(missing, string(k))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return newError(http.StatusForbidden, CodeForbidden, "redact: a key limited to scope prefixes may add kinds to the deployment's (REDACT), not remove them; "+
		"missing: "+strings.Join(missing, ", "))
}
