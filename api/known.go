package api

import (
	"context"
	"errors"

	"github.com/credohq/credo/memory"
)

// scopeKnown answers, beside a read of scope that found found rows, whether memory has
// ever held an episode or a belief of scope (with inherit, or of an ancestor), and when
// not, the nearest scope p may read: a misspelt scope would otherwise read as an empty
// memory. An agent's new user is a scope not known yet too, so the read is answered as
// usual, with scope_known false, rather than refused. A read that found anything needs
// no query.
func (s *Server) scopeKnown(ctx context.Context, p *Principal, scope string, inherit bool, found int) (known bool, didYouMean string, err error) {
	if found > 0 {
		return true, "", nil
	}
	err = s.store.KnownScope(ctx, memory.ScopeQuery{Scope: scope, Inherit: inherit, Sees: p.Sees})
	if unknown, ok := errors.AsType[*memory.UnknownScopeError](err); ok {
		return false, unknown.Nearest, nil
	}
	if err != nil {
		return false, "", s.internal(ctx, err)
	}
	return true, "", nil
}
