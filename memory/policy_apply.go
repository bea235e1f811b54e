package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transcript"
)

// PolicyApplied is what ApplyPolicy redacted, or would redact (DryRun).
type PolicyApplied struct {
	Prefix string `json:"scope_prefix"`
	DryRun bool   `json:"dry_run"`
	// Scopes are the scopes where something was redacted, in order.
	Scopes []ScopeRedacted `json:"scopes"`
	// Counts is the secrets redacted by kind, over every scope.
	Counts map[string]int `json:"counts"`
}

// ScopeRedacted is what ApplyPolicy redacted in one scope: the rows it rewrote, per
// table, and the secrets by kind.
type ScopeRedacted struct {
	Scope  string         `json:"scope"`
	Rows   map[string]int `json:"rows"`
	Counts map[string]int `json:"counts"`
}

// ApplyPolicy redacts what is stored in every scope starting with prefix ("": every
// scope) with the redactor of the policy in force there (Policy.Redactor over base):
// the transcripts of episodes (and their last errors), the statements, subjects,
// attributes and quotes of beliefs, the texts of revision events and of review items.
// A belief, event or item whose text changed loses its vector, which was of the secret:
// the scope's next extraction or read embeds it again. A transcript's content hash
// becomes one of the redacted transcript, as after a purge's redaction. Each scope is
// redacted in its own transaction under its lock; with dryRun nothing is written, and
// the counts are what would be.
func (s *Store) ApplyPolicy(ctx context.Context, prefix string, base *redact.Redactor, dryRun bool) (*PolicyApplied, error) {
	if strings.ContainsRune(prefix, 0) {
		return nil, transcript.InputErrorf(ErrPolicy, "scope_prefix", "contains a NUL character")
	}
	scopes, err := s.SubtreeScopes(ctx, prefix)
	if err != nil {
		return nil, err
	}
	policies, err := policiesFor(ctx, s.db, scopes)
	if err != nil {
		return nil, err
	}
	out := &PolicyApplied{Prefix: prefix, DryRun: dryRun, Scopes: []ScopeRedacted{}, Counts: map[string]int{}}
	redactors := map[string]*redact.Redactor{} // by the prefix of the policy in force
	for _, scope := range scopes {
		p := policies[scope]
		key := "\x00default"
		if p != nil {
			key = p.ScopePrefix
		}
		r := redactors[key]
		if r == nil {
			if r, err = p.Redactor(base); err != nil {
				return out, fmt.Errorf("policy of %q: %w", scope, err)
			}
			redactors[key] = r
		}
		var sr *ScopeRedacted
		err := s.inTxRetryingDeadlocks(ctx, func(tx pgx.Tx) error {
			var err error
			sr, err = redactScope(ctx, tx, scope, r, dryRun)
			return err
		})
		if err != nil {
			return out, fmt.Errorf("apply the policy to %q: %w", scope, err)
		}
		if len(sr.Counts) > 0 {
			out.Scopes = append(out.Scopes, *sr)
			for k, n := range sr.Counts {
				out.Counts[k] += n
			}
		}
	}
	return out, nil
}

// scopeRedaction is one scope's redaction in tx.
type scopeRedaction struct {
	tx     pgx.Tx
	scope  string
	r      *redact.Redactor
	dryRun bool
	out    *ScopeRedacted
}

// redactScope redacts the rows of scope, under its lock.
func redactScope(ctx context.Context, tx pgx.Tx, scope string, r *redact.Redactor, dryRun bool) (*ScopeRedacted, error) {
	sr := &scopeRedaction{tx: tx, scope: scope, r: r, dryRun: dryRun,
		out: &ScopeRedacted{Scope: scope, Rows: map[string]int{}, Counts: map[string]int{}}}
	if err := lockScope(ctx, tx, scope); err != nil {
		return nil, err
	}
	for _, step := range []func(context.Context) error{sr.episodes, sr.beliefs, sr.events, sr.items} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	return sr.out, nil
}

// text redacts one text and counts what it replaced.
func (sr *scopeRedaction) text(s string, counts redact.Counts) string {
	out, c := sr.r.Text(s)
	counts.Add(c)
	return out
}

// optional redacts a text that may be NULL.
func (sr *scopeRedaction) optional(s *string, counts redact.Counts) *string {
	if s == nil {
		return nil
	}
	out := sr.text(*s, counts)
	return &out
}

// jsonText redacts every string of a JSON value, object keys left as they are.
func (sr *scopeRedaction) jsonText(raw []byte, counts redact.Counts) ([]byte, error) {
	if raw == nil {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // ids and times stay as they were written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("read JSON: %w", err)
	}
	changed := false
	v = mapStrings(v, func(s string) string {
		out := sr.text(s, counts)
		changed = changed || out != s
		return out
	})
	if !changed {
		return raw, nil
	}
	return json.Marshal(v)
}

// mapStrings is v with f applied to each of its strings but object keys.
func mapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for i := range x {
			x[i] = mapStrings(x[i], f)
		}
	case map[string]any:
		for k := range x {
			x[k] = mapStrings(x[k], f)
		}
	}
	return v
}

// record counts a rewritten row of table, and says whether to write it.
func (sr *scopeRedaction) record(table string, counts redact.Counts) bool {
	if len(counts) == 0 {
		return false
	}
	sr.out.Rows[table]++
	sr.out.Counts = addCounts(sr.out.Counts, counts)
	return !sr.dryRun
}

// addCounts adds c to into, made when nil, and returns it.
func addCounts(into map[string]int, c redact.Counts) map[string]int {
	if into == nil {
		into = map[string]int{}
	}
	for k, n := range c {
		into[k] += n
	}
	return into
}

// episodes redacts the transcripts (their messages' contents and names) and last errors
// of the scope's episodes, adding to each one's redaction counts.
func (sr *scopeRedaction) episodes(ctx context.Context) error {
	rows, err := sr.tx.Query(ctx, `SELECT id, messages, last_error, redactions FROM episode WHERE scope = $1 ORDER BY id`, sr.scope)
	if err != nil {
		return fmt.Errorf("read episodes: %w", err)
	}
	type row struct {
		ID         int64
		Messages   []byte
		LastError  *string
		Redactions map[string]int
	}
	eps, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return fmt.Errorf("read episodes: %w", err)
	}
	for _, e := range eps {
		counts := redact.Counts{}
		messages, ok, err := rewriteMessages(e.Messages, func(s string) string { return sr.text(s, counts) })
		if err != nil {
			return fmt.Errorf("redact episode %d: %w", e.ID, err)
		}
		if !ok {
			messages = e.Messages // not a transcript credo wrote: left to a purge
		}
		lastError := sr.optional(e.LastError, counts)
		if !sr.record("episode", counts) {
			continue
		}
		// The hash is made here, not in SQL: on Citus an UPDATE may not call a STABLE
		// function (convert_to) on its columns.
		_, err = sr.tx.Exec(ctx, `UPDATE episode SET messages = $2, last_error = $3, redactions = $4, content_hash = $5
			WHERE scope = $6 AND id = $1`, e.ID, messages, lastError, addCounts(e.Redactions, counts), redactedHash(e.ID, messages), sr.scope)
		if err != nil {
			return fmt.Errorf("redact episode %d: %w", e.ID, err)
		}
	}
	return nil
}

// redactedHash is the content hash of episode id once its transcript is redacted: not
// the original's, which would confirm guesses of a secret, and unique to the episode.
func redactedHash(id int64, messages []byte) string {
	h := sha256.New()
	h.Write([]byte(strconv.FormatInt(id, 10) + ":"))
	h.Write(messages)
	return "redacted:" + hex.EncodeToString(h.Sum(nil))
}

// beliefs redacts the statements, subjects, attributes and quotes of the scope's
// beliefs, history included.
func (sr *scopeRedaction) beliefs(ctx context.Context) error {
	rows, err := sr.tx.Query(ctx, `SELECT id, statement, subject, attribute, quote FROM belief WHERE scope = $1 ORDER BY id`, sr.scope)
	if err != nil {
		return fmt.Errorf("read beliefs: %w", err)
	}
	type row struct {
		ID                            int64
		Statement, Subject, Attribute string
		Quote                         *string
	}
	bs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return fmt.Errorf("read beliefs: %w", err)
	}
	for _, b := range bs {
		counts := redact.Counts{}
		statement, subject, attribute := sr.text(b.Statement, counts), sr.text(b.Subject, counts), sr.text(b.Attribute, counts)
		quote := sr.optional(b.Quote, counts)
		if !sr.record("belief", counts) {
			continue
		}
		_, err := sr.tx.Exec(ctx, `UPDATE belief SET statement = $2, subject = $3, attribute = $4, quote = $5,
				embedding = NULL, embed_model = NULL
			WHERE scope = $6 AND id = $1`, b.ID, statement, subject, attribute, quote, sr.scope)
		if err != nil {
			return fmt.Errorf("redact belief %d: %w", b.ID, err)
		}
	}
	return forgetCommonWords(ctx, sr.tx, sr.scope)
}

// events redacts the texts of the scope's revision events: the statements, the excerpt,
// the rationale and the prior state a backfill kept.
func (sr *scopeRedaction) events(ctx context.Context) error {
	rows, err := sr.tx.Query(ctx, `SELECT id, old_statement, new_statement, excerpt, rationale, prior::text::bytea
		FROM revision_event WHERE scope = $1 ORDER BY id`, sr.scope)
	if err != nil {
		return fmt.Errorf("read revision events: %w", err)
	}
	type row struct {
		ID                           int64
		Old, New, Excerpt, Rationale *string
		Prior                        []byte
	}
	evs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return fmt.Errorf("read revision events: %w", err)
	}
	for _, e := range evs {
		counts := redact.Counts{}
		old, now := sr.optional(e.Old, counts), sr.optional(e.New, counts)
		excerpt, rationale := sr.optional(e.Excerpt, counts), sr.optional(e.Rationale, counts)
		prior, err := sr.jsonText(e.Prior, counts)
		if err != nil {
			return fmt.Errorf("redact revision event %d: %w", e.ID, err)
		}
		if !sr.record("revision_event", counts) {
			continue
		}
		_, err = sr.tx.Exec(ctx, `UPDATE revision_event SET old_statement = $2, new_statement = $3, excerpt = $4,
				rationale = $5, prior = convert_from($6, 'UTF8')::jsonb, embedding = NULL, embed_model = NULL
			WHERE scope = $7 AND id = $1`, e.ID, old, now, excerpt, rationale, prior, sr.scope)
		if err != nil {
			return fmt.Errorf("redact revision event %d: %w", e.ID, err)
		}
	}
	return nil
}

// items redacts the texts of the scope's review items: the revision proposed, the
// detail and the operator's note.
func (sr *scopeRedaction) items(ctx context.Context) error {
	rows, err := sr.tx.Query(ctx, `SELECT id, proposed::text::bytea, detail, note FROM belief_conflict WHERE scope = $1 ORDER BY id`,
		sr.scope)
	if err != nil {
		return fmt.Errorf("read review items: %w", err)
	}
	type row struct {
		ID           int64
		Proposed     []byte
		Detail, Note *string
	}
	items, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return fmt.Errorf("read review items: %w", err)
	}
	for _, it := range items {
		counts := redact.Counts{}
		proposed, err := sr.jsonText(it.Proposed, counts)
		if err != nil {
			return fmt.Errorf("redact review item %d: %w", it.ID, err)
		}
		detail, note := sr.optional(it.Detail, counts), sr.optional(it.Note, counts)
		if !sr.record("belief_conflict", counts) {
			continue
		}
		_, err = sr.tx.Exec(ctx, `UPDATE belief_conflict SET proposed = convert_from($2, 'UTF8')::jsonb, detail = $3, note = $4,
				embedding = NULL, embed_model = NULL
			WHERE scope = $5 AND id = $1`, it.ID, proposed, detail, note, sr.scope)
		if err != nil {
			return fmt.Errorf("redact review item %d: %w", it.ID, err)
		}
	}
	return nil
}
