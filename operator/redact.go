package operator

import (
	"context"

	"github.com/credohq/credo/memory"
)

// redact replaces the secrets of an operator's fact under the policy in force in scope,
// before the embedder sees it or it is stored: what an operator types passes the same
// detectors as a transcript.
func (o *Operator) redact(ctx context.Context, scope string, f *memory.Fact) error {
	red, err := o.store.RedactorFor(ctx, scope, o.redactor)
	if err != nil {
		return err
	}
	red.Fields(&f.Statement, &f.Subject, &f.Attribute)
	return nil
}
