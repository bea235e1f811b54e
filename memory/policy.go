package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transcript"
)

// MaxInstructions bounds a policy's instructions, in characters.
const MaxInstructions = 2000

// ErrPolicy is what every refusal of a policy is (errors.Is), an *transcript.InputError
// whose Message says why: nothing was stored.
var ErrPolicy = errors.New("invalid policy")

// Policy is an organisation's policy for every scope starting with ScopePrefix: what to
// tell extraction and consolidation, and what to redact. A scope's policy is the one of
// the longest prefix it starts with, whole: a nearer policy replaces a farther one, it
// does not add to it.
type Policy struct {
	ScopePrefix string `json:"scope_prefix"`
	// Instructions go into the extraction and consolidation prompts of the scopes, in a
	// section that says they come from the operator; "" is none.
	Instructions string `json:"instructions"`
	// Patterns are secrets of the organisation's own to redact, beside the kinds.
	Patterns []redact.Pattern `json:"redact_patterns"`
	// Redact is the kinds of secret redacted in the scopes; nil is the deployment's
	// (REDACT), empty is none.
	Redact    *redact.Set `json:"redact"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// Check says what of p cannot be stored: a prefix that could not start a scope (the
// scope's rules, but it may be empty: every scope), instructions that are not text of at
// most MaxInstructions characters, or patterns that redact.CheckPatterns refuses.
func (p *Policy) Check() error {
	if p.ScopePrefix != "" {
		if err := transcript.CheckScope("scope_prefix", p.ScopePrefix); err != nil {
			return policyError(err)
		}
	}
	if err := transcript.CheckText("instructions", p.Instructions, MaxInstructions); err != nil {
		return policyError(err)
	}
	if err := redact.CheckPatterns(p.Patterns); err != nil {
		return transcript.InputErrorf(ErrPolicy, "redact pattern", "%s", strings.TrimPrefix(err.Error(), redact.ErrPattern.Error()+": "))
	}
	return nil
}

// policyError is an input error of the shared rules as a refusal of a policy.
func policyError(err error) error {
	if e, ok := errors.AsType[*transcript.InputError](err); ok {
		return transcript.InputErrorf(ErrPolicy, e.Field, "%s", e.Problem)
	}
	return err
}

// Redactor is the redactor of the scopes p governs: base's kinds unless p names its own,
// and p's patterns. A nil p is base.
func (p *Policy) Redactor(base *redact.Redactor) (*redact.Redactor, error) {
	if p == nil {
		return base, nil
	}
	return base.With(p.Redact, p.Patterns)
}

const policyColumns = `scope_prefix, instructions, patterns, redact, updated_at`

func scanPolicy(row pgx.CollectableRow) (*Policy, error) { return scanPolicyAfter(row) }

// scanPolicyAfter scans lead, then policyColumns.
func scanPolicyAfter(row pgx.CollectableRow, lead ...any) (*Policy, error) {
	var (
		p     Policy
		kinds []string
	)
	if err := row.Scan(append(lead, &p.ScopePrefix, &p.Instructions, &p.Patterns, &kinds, &p.UpdatedAt)...); err != nil {
		return nil, err
	}
	if kinds != nil { // NULL is the deployment's kinds, {} none
		set := redact.Set{}
		if len(kinds) > 0 {
			var err error
			if set, err = redact.ParseSet(strings.Join(kinds, ",")); err != nil {
				return nil, fmt.Errorf("policy %q: %w", p.ScopePrefix, err)
			}
		}
		p.Redact = &set
	}
	if p.Patterns == nil {
		p.Patterns = []redact.Pattern{}
	}
	p.UpdatedAt = p.UpdatedAt.UTC()
	return &p, nil
}

// SetPolicy stores p as the policy of its prefix, replacing the one there was: what p
// leaves out is unset. It applies to what is enqueued and extracted afterwards;
// ApplyPolicy redacts what is stored already.
func (s *Store) SetPolicy(ctx context.Context, p Policy) (*Policy, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if p.Patterns == nil {
		p.Patterns = []redact.Pattern{}
	}
	var kinds []string
	if p.Redact != nil {
		kinds = []string{}
		for _, k := range *p.Redact {
			kinds = append(kinds, string(k))
		}
	}
	rows, err := s.db.Query(ctx, `INSERT INTO scope_policy (scope_prefix, instructions, patterns, redact, updated_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (scope_prefix) DO UPDATE SET instructions = excluded.instructions, patterns = excluded.patterns,
			redact = excluded.redact, updated_at = excluded.updated_at
		RETURNING `+policyColumns, p.ScopePrefix, p.Instructions, p.Patterns, kinds, s.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("set the policy of %q: %w", p.ScopePrefix, err)
	}
	out, err := pgx.CollectExactlyOneRow(rows, scanPolicy)
	if err != nil {
		return nil, fmt.Errorf("set the policy of %q: %w", p.ScopePrefix, err)
	}
	return out, nil
}

// DeletePolicy removes the policy of prefix and returns it; ErrNotFound when there is
// none.
func (s *Store) DeletePolicy(ctx context.Context, prefix string) (*Policy, error) {
	rows, err := s.db.Query(ctx, "DELETE FROM scope_policy WHERE scope_prefix = $1 RETURNING "+policyColumns, prefix)
	if err != nil {
		return nil, fmt.Errorf("unset the policy of %q: %w", prefix, err)
	}
	p, err := pgx.CollectExactlyOneRow(rows, scanPolicy)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("no policy for the prefix %q: %w", prefix, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("unset the policy of %q: %w", prefix, err)
	}
	return p, nil
}

// Policies lists the policies, by prefix.
func (s *Store) Policies(ctx context.Context) ([]*Policy, error) {
	rows, err := s.db.Query(ctx, `SELECT `+policyColumns+` FROM scope_policy ORDER BY scope_prefix`)
	if err != nil {
		return nil, fmt.Errorf("read policies: %w", err)
	}
	ps, err := pgx.CollectRows(rows, scanPolicy)
	if err != nil {
		return nil, fmt.Errorf("read policies: %w", err)
	}
	return ps, nil
}

// PolicyFor is the policy in force in scope: the one of the longest prefix scope starts
// with, or nil when there is none.
func (s *Store) PolicyFor(ctx context.Context, scope string) (*Policy, error) {
	ps, err := policiesFor(ctx, s.db, []string{scope})
	if err != nil {
		return nil, err
	}
	return ps[scope], nil
}

// RedactorFor is base with the policy in force in scope over it: what redacts text
// written to or asked of scope.
func (s *Store) RedactorFor(ctx context.Context, scope string, base *redact.Redactor) (*redact.Redactor, error) {
	p, err := s.PolicyFor(ctx, scope)
	if err != nil {
		return nil, err
	}
	return p.Redactor(base)
}

// PoliciesForTx is, in tx, the policy in force in each of scopes that has one.
func PoliciesForTx(ctx context.Context, tx pgx.Tx, scopes []string) (map[string]*Policy, error) {
	return policiesFor(ctx, tx, scopes)
}

func policiesFor(ctx context.Context, db batchSender, scopes []string) (map[string]*Policy, error) {
	out := map[string]*Policy{}
	if err := sendQueued(ctx, db, func(b *pgx.Batch) { queuePolicies(b, scopes, out) }); err != nil {
		return nil, err
	}
	return out, nil
}

// queuePolicies queues the read of the policy in force in each of scopes on b, into out
// once b is sent.
func queuePolicies(b *pgx.Batch, scopes []string, out map[string]*Policy) {
	if len(scopes) == 0 {
		return
	}
	b.Queue(`SELECT DISTINCT ON (s.scope) s.scope,
			p.scope_prefix, p.instructions, p.patterns, p.redact, p.updated_at
		FROM unnest($1::text[]) AS s(scope) JOIN scope_policy p ON starts_with(s.scope, p.scope_prefix)
		ORDER BY s.scope, length(p.scope_prefix) DESC`, scopes).Query(func(rows pgx.Rows) error {
		_, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct{}, error) {
			var scope string
			p, err := scanPolicyAfter(row, &scope)
			if err == nil {
				out[scope] = p
			}
			return struct{}{}, err
		})
		if err != nil {
			return fmt.Errorf("read the policies in force: %w", err)
		}
		return nil
	})
}
