package tracing

import (
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/pgxpool"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
)

// ConfigurePool traces the statements run on the pool under a recording span (a
// request's, a job's, a command's), and the waits for a connection. A span is named for
// its statement (SELECT episode, INSERT belief, River's JobGetAvailable) and records
// neither its arguments nor its text, which may hold a scope (an index of one scope
// names it). Statements under no span (River's polling) are not traced. Off, it leaves
// pc as it is. Pass it to app.OpenDB.
func (t *Tracing) ConfigurePool(pc *pgxpool.Config) {
	if !t.Enabled() {
		return
	}
	pc.ConnConfig.Tracer = otelpgx.NewTracer(
		otelpgx.WithTracerProvider(t.provider),
		otelpgx.WithMeterProvider(metricnoop.NewMeterProvider()), // metrics stay on Prometheus
		otelpgx.WithDisableSQLStatementInAttributes(),
		otelpgx.WithSpanNameFunc(StatementName),
	)
}

// StatementName names a SQL statement by what it does and to which table, as the
// database conventions' span names do ("SELECT belief", "INSERT episode", "CREATE
// INDEX"), or by its sqlc name ("-- name: JobGetAvailable :many", River's queries). It
// never quotes a value.
func StatementName(sql string) string {
	sql = strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		if name, _, ok := strings.Cut(rest, " "); ok && identifier(name) {
			return name
		}
	}
	words := strings.Fields(skipComments(sql))
	if len(words) == 0 {
		return "SQL"
	}
	op := strings.ToUpper(words[0])
	if !identifier(op) {
		return "SQL"
	}
	after := map[string]string{"SELECT": "FROM", "WITH": "FROM", "DELETE": "FROM", "INSERT": "INTO", "UPDATE": "UPDATE"}[op]
	if after == "" {
		// CREATE INDEX, DROP INDEX, SET, BEGIN...: the kind of object, never its name.
		if len(words) > 1 && (op == "CREATE" || op == "DROP" || op == "ALTER") && identifier(strings.ToUpper(words[1])) {
			return op + " " + strings.ToUpper(words[1])
		}
		return op
	}
	for i, w := range words[:len(words)-1] {
		if strings.EqualFold(w, after) {
			if table, _, _ := strings.Cut(words[i+1], "("); identifier(table) {
				return op + " " + table
			}
			break
		}
	}
	return op
}

// skipComments drops the comments leading sql.
func skipComments(sql string) string {
	for {
		sql = strings.TrimSpace(sql)
		switch {
		case strings.HasPrefix(sql, "--"):
			_, rest, ok := strings.Cut(sql, "\n")
			if !ok {
				return ""
			}
			sql = rest
		case strings.HasPrefix(sql, "/*"):
			_, rest, ok := strings.Cut(sql, "*/")
			if !ok {
				return ""
			}
			sql = rest
		default:
			return sql
		}
	}
}

// identifier says whether s is a bare SQL name (possibly schema-qualified), not a
// literal, a parameter or an expression.
func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case (r >= '0' && r <= '9' || r == '.') && i > 0:
		default:
			return false
		}
	}
	return true
}
