package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// AuditQuery selects what an audit counts: the revisions and refused revisions of one
// scope, or of every scope starting with a prefix, made at or after Since.
type AuditQuery struct {
	// Scope, when set, is the one scope audited; else every scope starting with
	// ScopePrefix ("": every scope).
	Scope       string
	ScopePrefix string
	// Since, when set, leaves out what was made before it.
	Since *time.Time
}

// Audit is how precise a scope's revisions were: what each writer applied, how much of
// it an operator reverted or corrected since, and how operators decided what the engine
// refused. Its JSON form is the contract of `beliefs audit --json` and GET /v1/audit.
type Audit struct {
	Scope       *string    `json:"scope"`
	ScopePrefix *string    `json:"scope_prefix"`
	Since       *time.Time `json:"since"`
	// Revisions are the applied revisions by origin, action and reason; reverts are
	// counted apart, in Reverts.
	Revisions []AuditRevisions `json:"revisions"`
	// Origins are the same per writer, with its precision.
	Origins []AuditOrigin `json:"origins"`
	// Reverts is how many reverts operators made.
	Reverts int `json:"reverts"`
	// Refusals are the refused revisions by origin and cause, with their decisions.
	Refusals []AuditRefusals `json:"refusals"`
}

// AuditRevisions counts the applied revisions of one origin, action and reason.
type AuditRevisions struct {
	Origin RevisionOrigin `json:"origin"`
	Action Action         `json:"action"`
	Reason Reason         `json:"reason"`
	// Applied is every revision made, reverted or not.
	Applied int `json:"applied"`
	// Reverted were undone by an operator's revert.
	Reverted int `json:"reverted"`
	// Corrected stand, but the belief they wrote was superseded or retracted by an
	// operator since.
	Corrected int `json:"corrected"`
}

// AuditOrigin is the revisions of one writer and their precision.
type AuditOrigin struct {
	Origin    RevisionOrigin `json:"origin"`
	Applied   int            `json:"applied"`
	Reverted  int            `json:"reverted"`
	Corrected int            `json:"corrected"`
	// Precision is 1 - reverted / applied; null when nothing was applied.
	Precision *float64 `json:"precision"`
}

// AuditRefusals counts the revisions of one origin the engine refused for one cause,
// and how they were decided.
type AuditRefusals struct {
	Origin  RevisionOrigin `json:"origin"`
	Cause   Cause          `json:"cause"`
	Refused int            `json:"refused"`
	// Open await a decision; Applied and Dismissed were decided by an operator.
	Open      int `json:"open"`
	Applied   int `json:"applied"`
	Dismissed int `json:"dismissed"`
	// Closed were closed otherwise: the belief left memory, or consolidation decided.
	Closed int `json:"closed"`
}

// Precision is 1 - reverted/applied, or nil when applied is 0: the share of a writer's
// revisions that no operator undid.
func Precision(applied, reverted int) *float64 {
	if applied == 0 {
		return nil
	}
	p := 1 - float64(reverted)/float64(applied)
	return &p
}

// Audit counts the revisions and refusals q selects. A scope without any is an audit
// of zeros, not an error: nothing was revised there yet.
func (s *Store) Audit(ctx context.Context, q AuditQuery) (*Audit, error) {
	q.Scope, q.ScopePrefix = strings.TrimSpace(q.Scope), strings.TrimSpace(q.ScopePrefix)
	if q.Scope != "" && q.ScopePrefix != "" {
		return nil, invalidf("give a scope or a scope prefix, not both")
	}
	out := &Audit{Since: q.Since, Revisions: []AuditRevisions{}, Origins: []AuditOrigin{}, Refusals: []AuditRefusals{}}
	// in is the selection of rows of table alias t: $1 is the scope or the prefix, $2 Since.
	in := func(t string) string {
		return fmt.Sprintf("starts_with(%[1]s.scope, $1) AND ($2::timestamptz IS NULL OR %[1]s.created_at >= $2)", t)
	}
	arg := q.ScopePrefix
	// sameScope names o's scope as e's; for one scope as $1, so that Citus keeps the
	// subquery on the scope's shard.
	sameScope := "o.scope = e.scope"
	if q.Scope != "" {
		sameScope = "o.scope = $1"
		in = func(t string) string {
			return fmt.Sprintf("%[1]s.scope = $1 AND ($2::timestamptz IS NULL OR %[1]s.created_at >= $2)", t)
		}
		arg, out.Scope = q.Scope, &q.Scope
	} else {
		out.ScopePrefix = &q.ScopePrefix
	}
	if out.Since != nil {
		t := out.Since.UTC()
		out.Since = &t
	}
	batch := &pgx.Batch{}
	// An operator's correction of what a revision wrote is a later supersede or
	// retraction of its new belief, not a revert.
	batch.Queue(`SELECT e.origin, e.action, e.reason, count(*)::int,
			(count(*) FILTER (WHERE e.reverted_by IS NOT NULL))::int,
			(count(*) FILTER (WHERE e.reverted_by IS NULL AND e.new_belief_id IS NOT NULL AND EXISTS (
				SELECT 1 FROM revision_event o WHERE `+sameScope+` AND o.old_belief_id = e.new_belief_id
					AND o.id > e.id AND o.origin = 'operator' AND o.action IN ('supersede', 'retract')
					AND o.reverted_by IS NULL)))::int
		FROM revision_event e WHERE `+in("e")+` AND e.action <> 'revert'
		GROUP BY 1, 2, 3`, arg, q.Since)
	batch.Queue(`SELECT count(*)::int FROM revision_event e WHERE `+in("e")+` AND e.action = 'revert'`, arg, q.Since)
	batch.Queue(`SELECT c.origin, c.cause, count(*)::int,
			(count(*) FILTER (WHERE c.status = 'open'))::int,
			(count(*) FILTER (WHERE c.resolution = 'applied'))::int,
			(count(*) FILTER (WHERE c.resolution = 'dismissed'))::int,
			(count(*) FILTER (WHERE c.resolution NOT IN ('applied', 'dismissed')))::int
		FROM belief_conflict c WHERE `+in("c")+` AND c.kind = 'refused'
		GROUP BY 1, 2`, arg, q.Since)
	br := s.db.SendBatch(ctx, batch)
	defer br.Close()

	rows, _ := br.Query()
	var r AuditRevisions
	_, err := pgx.ForEachRow(rows, []any{&r.Origin, &r.Action, &r.Reason, &r.Applied, &r.Reverted, &r.Corrected}, func() error {
		out.Revisions = append(out.Revisions, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit revisions: %w", err)
	}
	if err := br.QueryRow().Scan(&out.Reverts); err != nil {
		return nil, fmt.Errorf("audit reverts: %w", err)
	}
	rows, _ = br.Query()
	var f AuditRefusals
	_, err = pgx.ForEachRow(rows, []any{&f.Origin, &f.Cause, &f.Refused, &f.Open, &f.Applied, &f.Dismissed, &f.Closed}, func() error {
		out.Refusals = append(out.Refusals, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit refusals: %w", err)
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	out.sort()
	return out, nil
}

// originRank is the order origins are listed in: the writers, then the operator.
func originRank(o RevisionOrigin) int {
	return slices.Index([]RevisionOrigin{RevisionExtraction, RevisionConsolidation, RevisionOperator}, o)
}

// sort orders the rows and sums the origins with their precision.
func (a *Audit) sort() {
	slices.SortFunc(a.Revisions, func(x, y AuditRevisions) int {
		return cmp.Or(cmp.Compare(originRank(x.Origin), originRank(y.Origin)), cmp.Compare(x.Action, y.Action), cmp.Compare(x.Reason, y.Reason))
	})
	slices.SortFunc(a.Refusals, func(x, y AuditRefusals) int {
		return cmp.Or(cmp.Compare(originRank(x.Origin), originRank(y.Origin)), cmp.Compare(x.Cause, y.Cause))
	})
	rows := make([]AuditOrigin, len(a.Revisions))
	for i, r := range a.Revisions {
		rows[i] = AuditOrigin{Origin: r.Origin, Applied: r.Applied, Reverted: r.Reverted, Corrected: r.Corrected}
	}
	if a.Origins = SumOrigins(rows); a.Origins == nil {
		a.Origins = []AuditOrigin{}
	}
}

// SumOrigins adds rows up by origin, in the audit's order of origins, each with its
// precision: how an audit and eval's scenarios report the same way.
func SumOrigins(rows []AuditOrigin) []AuditOrigin {
	var out []AuditOrigin
	for _, r := range rows {
		i := slices.IndexFunc(out, func(o AuditOrigin) bool { return o.Origin == r.Origin })
		if i < 0 {
			out = append(out, AuditOrigin{Origin: r.Origin})
			i = len(out) - 1
		}
		out[i].Applied += r.Applied
		out[i].Reverted += r.Reverted
		out[i].Corrected += r.Corrected
	}
	slices.SortFunc(out, func(x, y AuditOrigin) int { return cmp.Compare(originRank(x.Origin), originRank(y.Origin)) })
	for i := range out {
		out[i].Precision = Precision(out[i].Applied, out[i].Reverted)
	}
	return out
}

// RevertedByOrigin counts every reverted revision event of every scope by the origin
// of the revision, for credo_revisions_reverted_total. It reads the partial index of
// reverted events, however many events there are.
func (s *Store) RevertedByOrigin(ctx context.Context) (map[RevisionOrigin]int, error) {
	rows, err := s.db.Query(ctx, "SELECT origin, count(*)::int FROM revision_event WHERE reverted_by IS NOT NULL GROUP BY origin")
	if err != nil {
		return nil, fmt.Errorf("count reverted events: %w", err)
	}
	out := map[RevisionOrigin]int{}
	var (
		origin RevisionOrigin
		n      int
	)
	_, err = pgx.ForEachRow(rows, []any{&origin, &n}, func() error {
		out[origin] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count reverted events: %w", err)
	}
	return out, nil
}
