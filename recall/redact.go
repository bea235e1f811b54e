package recall

import (
	"context"

	"github.com/credohq/credo/memory"
)

// checkQuery checks q, then replaces the secrets of its question: an agent's question is
// user text, and it goes to the embedder and, for Ask, to the chat model. It returns
// what the scope stored without vectors, to be embedded with the question.
func (r *Reader) checkQuery(ctx context.Context, q *Query) ([]memory.Unembedded, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	return r.redact(ctx, q.Scope, &q.Query)
}

// redact replaces the secrets of *query under the policy in force in scope: a policy may
// add patterns where REDACT is none. The same round trip reads what the scope stored
// without vectors, returned to be embedded in the question's embedding call.
func (r *Reader) redact(ctx context.Context, scope string, query *string) ([]memory.Unembedded, error) {
	if *query == "" {
		return nil, nil
	}
	limit := 0
	if r.embeds() {
		limit = maxPending
	}
	policy, pending, err := r.cfg.Store.ReadForQuestion(ctx, scope, r.cfg.EmbedModel, limit)
	if err != nil {
		return nil, err
	}
	red, err := policy.Redactor(r.cfg.Redact)
	if err != nil {
		return nil, err
	}
	*query, _ = red.Text(*query)
	return pending, nil
}
