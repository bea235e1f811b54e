package webhook

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/memory"
)

var _ memory.ScopeNamer = (*Dispatcher)(nil)

// NamedScopesTx is the scopes that deliveries name, as q asks: a purge of a whole scope
// erases a scope only its deliveries still name (ErasedTx deletes them).
func (d *Dispatcher) NamedScopesTx(ctx context.Context, tx pgx.Tx, q memory.ScopeNames) ([]string, error) {
	sql, arg := "SELECT $1::text WHERE EXISTS (SELECT 1 FROM webhook_delivery WHERE scope = $1)", q.Scope
	if q.Scope == "" {
		sql, arg = "SELECT DISTINCT scope FROM webhook_delivery WHERE starts_with(scope, $1)", q.Prefix
	}
	rows, err := tx.Query(ctx, sql, arg)
	if err != nil {
		return nil, fmt.Errorf("scopes of deliveries: %w", err)
	}
	scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("scopes of deliveries: %w", err)
	}
	return scopes, nil
}
