package memory

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// setting is one run-time parameter and its value, a literal of the code's own.
type setting struct{ name, value string }

// setLocal sets settings for the rest of tx, in one round trip. SET LOCAL, not
// set_config(): on Citus a transaction's SET LOCAL reaches the shards it queries when
// citus.propagate_set_commands is 'local' (PostgreSQL without Citus keeps the name as a
// placeholder), set_config() never does, and an index walk on a worker would use the
// worker's defaults (recall 0.96 where the coordinator's settings give 0.99).
func setLocal(ctx context.Context, tx pgx.Tx, settings ...setting) error {
	var b strings.Builder
	b.WriteString("SET LOCAL citus.propagate_set_commands = 'local'")
	for _, s := range settings {
		b.WriteString("; SET LOCAL " + s.name + " = '" + s.value + "'")
	}
	// No arguments: pgx sends it with the simple protocol, several statements at once.
	_, err := tx.Exec(ctx, b.String())
	return err
}
