package dbtest

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ExplainPrepared is EXPLAIN (options) of sql with args as a pooled connection runs it,
// in tx: prepared, executed six times first, so that the plan shown is the one
// PostgreSQL settles on, generic or custom. (EXPLAIN of a statement with parameters
// would plan it once for their values.) The arguments are written as literals: strings,
// integers, and values whose String is their text form, as pgvector's vectors.
func ExplainPrepared(ctx context.Context, tx pgx.Tx, options, sql string, args []any) ([]string, error) {
	lits := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			lits[i] = quote(v)
		case int:
			lits[i] = strconv.Itoa(v)
		case int32:
			lits[i] = strconv.FormatInt(int64(v), 10)
		case int64:
			lits[i] = strconv.FormatInt(v, 10)
		case fmt.Stringer:
			lits[i] = quote(v.String())
		default:
			return nil, fmt.Errorf("explain: argument %d of type %T", i+1, a)
		}
	}
	simple := pgx.QueryExecModeSimpleProtocol
	if _, err := tx.Exec(ctx, "PREPARE credo_explain AS "+sql, simple); err != nil {
		return nil, err
	}
	// PREPARE outlives the transaction: the statement is removed before it ends.
	defer func() { _, _ = tx.Exec(ctx, "DEALLOCATE credo_explain", simple) }()
	execute := "EXECUTE credo_explain(" + strings.Join(lits, ", ") + ")"
	for range 6 {
		if _, err := tx.Exec(ctx, execute, simple); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(ctx, "EXPLAIN ("+options+") "+execute, simple)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
