package changes

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/memory"
)

var _ memory.ScopeNamer = (*Log)(nil)

// NamedScopesTx is the scopes the feed holds rows of, and those its followers that keep
// rows name (memory.ScopeNamer), as q asks: a purge of a whole scope erases a scope only
// they still name, as its erasure deletes their rows.
func (l *Log) NamedScopesTx(ctx context.Context, tx pgx.Tx, q memory.ScopeNames) ([]string, error) {
	sql, arg := `SELECT $1::text WHERE EXISTS (SELECT 1 FROM change_head WHERE scope = $1)
		OR EXISTS (SELECT 1 FROM change WHERE scope = $1)`, q.Scope
	if q.Scope == "" {
		sql, arg = `SELECT DISTINCT scope FROM change_head WHERE starts_with(scope, $1)
			UNION SELECT DISTINCT scope FROM change WHERE starts_with(scope, $1)`, q.Prefix
	}
	rows, err := tx.Query(ctx, sql, arg)
	if err != nil {
		return nil, fmt.Errorf("scopes of the feed: %w", err)
	}
	scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("scopes of the feed: %w", err)
	}
	for _, f := range l.followers {
		if namer, ok := f.(memory.ScopeNamer); ok {
			more, err := namer.NamedScopesTx(ctx, tx, q)
			if err != nil {
				return nil, err
			}
			scopes = append(scopes, more...)
		}
	}
	return scopes, nil
}
