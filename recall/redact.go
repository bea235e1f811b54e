package recall

import (
	"context"
)

// checkQuery checks q, then replaces the secrets of its question: an agent's question is
// user text, and it goes to the embedder and, for Ask, to the chat model.
func (r *Reader) checkQuery(ctx context.Context, q *Query) error {
	if err := q.check(); err != nil {
		return err
	}
	var err error
	q.Query, err = r.redact(ctx, q.Scope, q.Query)
	return err
}

// redact is query with its secrets replaced under the policy in force in scope (one read
// of the scope's policy: a policy may add patterns where REDACT is none).
func (r *Reader) redact(ctx context.Context, scope, query string) (string, error) {
	if query == "" {
		return query, nil
	}
	red, err := r.cfg.Store.RedactorFor(ctx, scope, r.cfg.Redact)
	if err != nil {
		return "", err
	}
	out, _ := red.Text(query)
	return out, nil
}
