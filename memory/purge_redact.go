package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// redactedMarker replaces each purged span of a redacted transcript.
const redactedMarker = "[redacted]"

// CountRedactedEpisodes is the key of Purged.Counts, and of the tombstone's counts, for
// the episodes redacted rather than removed.
const CountRedactedEpisodes = "episode_redacted"

// CountRedactedBeliefs is the key of Purged.Counts, and of the tombstone's counts, for
// the kept beliefs whose statement quoted the purged text and was redacted.
const CountRedactedBeliefs = "belief_redacted"

// episodeQuotes is what an episode said of the purged beliefs, as the beliefs and their
// reinforcement events quote it.
type episodeQuotes struct {
	quotes []string
	// unknown is set when a purged belief or reinforcement of the episode has no quote:
	// nothing tells where its text is in the transcript.
	unknown bool
}

// findQuotes reads, before the purged beliefs and their events go, the quote of each
// purged belief from a selected episode and the excerpt of each of their reinforcements
// by one: the spans a redaction of the episode must find and replace.
func (p *purge) findQuotes(ctx context.Context) error {
	p.quotes = map[int64]*episodeQuotes{}
	if p.sel.All || len(p.episodes) == 0 {
		return nil
	}
	rows, err := p.tx.Query(ctx, `SELECT episode_id, quote FROM belief WHERE scope = $3 AND id = ANY($1) AND episode_id = ANY($2)
		UNION ALL SELECT episode_id, excerpt FROM revision_event
			WHERE scope = $3 AND action = 'reinforce' AND old_belief_id = ANY($1) AND episode_id = ANY($2)`,
		p.beliefs, p.episodes, p.sel.Scope)
	if err != nil {
		return fmt.Errorf("read quotes of purged beliefs: %w", err)
	}
	var (
		episode int64
		quote   *string
	)
	_, err = pgx.ForEachRow(rows, []any{&episode, &quote}, func() error {
		q := p.quotes[episode]
		if q == nil {
			q = &episodeQuotes{}
			p.quotes[episode] = q
		}
		if quote == nil || strings.TrimSpace(*quote) == "" {
			q.unknown = true
		} else if !slices.Contains(q.quotes, *quote) {
			q.quotes = append(q.quotes, *quote)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read quotes of purged beliefs: %w", err)
	}
	return nil
}

// purgedQuotes is every quote findQuotes found, of every selected episode.
func (p *purge) purgedQuotes() []string {
	var out []string
	for _, q := range p.quotes {
		out = append(out, q.quotes...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// redactEpisodes redacts, instead of deleting, the selected episodes that kept beliefs
// still come from: after the purged beliefs and their events are gone, a belief or a
// reinforcement that names the episode is one that stays. It redacts an episode only
// when the redaction can be complete; deleteEpisodes deletes the others, as always.
func (p *purge) redactEpisodes(ctx context.Context) error {
	if p.sel.All || len(p.episodes) == 0 {
		return nil
	}
	rows, err := p.tx.Query(ctx, `SELECT e.id, e.messages FROM episode e WHERE e.scope = $2 AND e.id = ANY($1)
			AND (EXISTS (SELECT 1 FROM belief b WHERE b.scope = $2 AND b.episode_id = e.id)
				OR EXISTS (SELECT 1 FROM revision_event r WHERE r.scope = $2 AND r.action = 'reinforce' AND r.episode_id = e.id))
		ORDER BY e.id`, p.episodes, p.sel.Scope)
	if err != nil {
		return fmt.Errorf("find episodes to redact: %w", err)
	}
	type source struct {
		ID       int64
		Messages []byte
	}
	sources, err := pgx.CollectRows(rows, pgx.RowToStructByPos[source])
	if err != nil {
		return fmt.Errorf("find episodes to redact: %w", err)
	}
	for _, s := range sources {
		q := p.quotes[s.ID]
		if q == nil {
			q = &episodeQuotes{}
		}
		if q.unknown {
			continue
		}
		ok, err := p.redact(ctx, s.ID, s.Messages, q.quotes)
		if err != nil {
			return fmt.Errorf("redact episode %d: %w", s.ID, err)
		}
		if ok {
			p.redacted = append(p.redacted, s.ID)
		}
	}
	if len(p.redacted) > 0 {
		p.out.Counts[CountRedactedEpisodes] = int64(len(p.redacted))
	}
	return nil
}

// redact replaces quotes and the needles in the transcript of episode id and reports
// whether it did: not when a quote is not in the transcript verbatim (the model
// paraphrased, and nothing tells where the purged words are), nor when the purged text
// is still found afterwards, by the same search that selected the episode, in the
// transcript or the external id. The last error goes: it may quote the transcript.
//
// content_hash becomes one of the redacted transcript: the original's would let anyone
// who reads the database test guesses of the purged words against it (a PIN has 10,000).
// Enqueueing the original transcript again stores it anew, as after a purge that deletes
// the episode.
func (p *purge) redact(ctx context.Context, id int64, raw []byte, quotes []string) (bool, error) {
	messages, ok, err := redactMessages(raw, quotes, p.needles)
	if err != nil || !ok {
		return false, err
	}
	spans := append(slices.Clone(quotes), p.needles...)
	// The hash is made here, not in SQL: on Citus an UPDATE may not call a STABLE
	// function (convert_to) beside its columns.
	tag, err := p.tx.Exec(ctx, `UPDATE episode e SET messages = $2, last_error = NULL, redacted_at = $3, content_hash = $6
		WHERE e.scope = $5 AND e.id = $1 AND NOT `+mentionsJSON("$2::jsonb", "$4")+` AND NOT `+mentionsText("e.external_id", "$4"),
		id, messages, p.now, spans, p.sel.Scope, redactedHash(id, messages))
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// redactMessages replaces every occurrence of quotes and needles, ignoring case, in the
// content and name of each message of a transcript (a JSON array of objects), keeping
// every other key as it was. ok is false when a quote is found nowhere, or the
// transcript is not an array of objects: it cannot be redacted.
func redactMessages(raw []byte, quotes, needles []string) (out json.RawMessage, ok bool, err error) {
	if slices.Contains(quotes, "") {
		return nil, false, nil // found nowhere, as an empty pattern would be everywhere
	}
	patterns, err := spanPatterns(quotes, needles)
	if err != nil {
		return nil, false, err
	}
	found := make([]bool, len(patterns))
	out, ok, err = rewriteMessages(raw, func(text string) string { return redactText(text, patterns, found) })
	if err != nil || !ok {
		return nil, false, err
	}
	// Quotes come first in patterns, each with its own.
	for i := range quotes {
		if !found[i] {
			return nil, false, nil
		}
	}
	return out, true, nil
}

// rewriteMessages is a transcript (a JSON array of objects) with the content and name of
// each message rewritten by f, every other key kept as it was. ok is false when the
// transcript is not an array of objects.
func rewriteMessages(raw []byte, f func(string) string) (out json.RawMessage, ok bool, err error) {
	var messages []map[string]json.RawMessage
	if json.Unmarshal(raw, &messages) != nil {
		return nil, false, nil //nolint:nilerr // not an array of objects: not redactable, which ok=false says
	}
	for _, m := range messages {
		for _, key := range []string{"content", "name"} {
			var text string
			if m[key] == nil || json.Unmarshal(m[key], &text) != nil {
				continue // absent, null or not a string: the check after the update sees it
			}
			redacted := f(text)
			if redacted == text {
				continue
			}
			if m[key], err = json.Marshal(redacted); err != nil {
				return nil, false, fmt.Errorf("encode redacted message: %w", err)
			}
		}
	}
	if out, err = json.Marshal(messages); err != nil {
		return nil, false, fmt.Errorf("encode redacted messages: %w", err)
	}
	return out, true, nil
}

// spanPatterns matches each of quotes, then each of needles, ignoring case; empty ones
// are left out.
func spanPatterns(quotes, needles []string) ([]*regexp.Regexp, error) {
	patterns := make([]*regexp.Regexp, 0, len(quotes)+len(needles))
	for _, s := range slices.Concat(quotes, needles) {
		if s == "" {
			continue
		}
		re, err := regexp.Compile("(?i)" + regexp.QuoteMeta(s))
		if err != nil {
			return nil, fmt.Errorf("match %d bytes of purged text: %w", len(s), err)
		}
		patterns = append(patterns, re)
	}
	return patterns, nil
}

// scrubKept replaces the purged spans in what kept rows copied from the selected
// episodes, before they are redacted or go: a kept belief's quote, and a kept event's
// excerpt and rationale. A kept quote may contain a purged one ("I have a dog, and my
// PIN is 5521") or overlap it in the transcript ("PIN is 5521 and I have a dog"): what
// it shares with a purged span of a message it was copied from goes too. An event whose
// text changed loses its vector, which was of the purged words.
func (p *purge) scrubKept(ctx context.Context) error {
	if p.sel.All || len(p.episodes) == 0 {
		return nil
	}
	rows, err := p.tx.Query(ctx, `SELECT true, b.id, b.episode_id, b.quote, '' FROM belief b
			WHERE b.episode_id = ANY($1) AND b.scope = $2 AND b.quote IS NOT NULL
		UNION ALL SELECT false, r.id, r.episode_id, coalesce(r.excerpt, ''), coalesce(r.rationale, '') FROM revision_event r
			WHERE r.episode_id = ANY($1) AND r.scope = $2`, p.episodes, p.sel.Scope)
	if err != nil {
		return fmt.Errorf("read kept quotes: %w", err)
	}
	type copied struct {
		Belief    bool // else a revision event
		ID        int64
		Episode   int64
		Quote     string
		Rationale string
	}
	kept, err := pgx.CollectRows(rows, pgx.RowToStructByPos[copied])
	if err != nil {
		return fmt.Errorf("read kept quotes: %w", err)
	}
	sources := map[int64]*scrubSource{}
	for _, c := range kept {
		src, err := p.scrubSource(ctx, sources, c.Episode)
		if err != nil {
			return err
		}
		quote := scrubQuote(c.Quote, src)
		rationale := redactText(c.Rationale, src.patterns, nil)
		switch {
		case quote == c.Quote && rationale == c.Rationale:
			continue
		case c.Belief:
			_, err = p.tx.Exec(ctx, "UPDATE belief SET quote = $2 WHERE scope = $3 AND id = $1", c.ID, quote, p.sel.Scope)
		default:
			_, err = p.tx.Exec(ctx, `UPDATE revision_event SET excerpt = nullif($2, ''), rationale = nullif($3, ''),
				embedding = NULL, embed_model = NULL WHERE scope = $4 AND id = $1`, c.ID, quote, rationale, p.sel.Scope)
		}
		if err != nil {
			return fmt.Errorf("scrub the quote of %d: %w", c.ID, err)
		}
	}
	return nil
}

// scrubSource is what scrubKept needs of one selected episode: the purged spans to find,
// and the texts of its messages that hold some, with where they are.
type scrubSource struct {
	patterns []*regexp.Regexp
	contents []string
	purged   [][][2]int // spans of patterns in contents[i]
}

// scrubSource reads episode's source once per purge.
func (p *purge) scrubSource(ctx context.Context, sources map[int64]*scrubSource, episode int64) (*scrubSource, error) {
	if src, ok := sources[episode]; ok {
		return src, nil
	}
	var quotes []string
	if q := p.quotes[episode]; q != nil {
		quotes = q.quotes
	}
	patterns, err := spanPatterns(quotes, p.needles)
	if err != nil {
		return nil, err
	}
	rows, err := p.tx.Query(ctx, `SELECT coalesce(m->>'content', '') FROM episode e, jsonb_array_elements(
			CASE WHEN jsonb_typeof(e.messages) = 'array' THEN e.messages ELSE '[]' END) m
		WHERE e.scope = $2 AND e.id = $1 AND jsonb_typeof(m) = 'object'`, episode, p.sel.Scope)
	if err != nil {
		return nil, fmt.Errorf("read episode %d: %w", episode, err)
	}
	contents, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read episode %d: %w", episode, err)
	}
	sources[episode] = newScrubSource(patterns, contents)
	return sources[episode], nil
}

// newScrubSource finds the purged spans of contents once, for every quote copied from them.
func newScrubSource(patterns []*regexp.Regexp, contents []string) *scrubSource {
	src := &scrubSource{patterns: patterns}
	for _, c := range contents {
		if spans := spansOf(c, patterns, nil); len(spans) > 0 {
			src.contents, src.purged = append(src.contents, c), append(src.purged, spans)
		}
	}
	return src
}

// scrubQuote replaces in q, a quote copied from src's contents, every purged span in it
// and every part of it that lies inside a purged span of a content it was copied from.
func scrubQuote(q string, src *scrubSource) string {
	if q == "" || len(src.patterns) == 0 {
		return q
	}
	spans := spansOf(q, src.patterns, nil)
	copiedFrom := regexp.MustCompile("(?i)" + regexp.QuoteMeta(q))
	for i, c := range src.contents {
		purged := src.purged[i]
		for _, loc := range copiedFrom.FindAllStringIndex(c, -1) {
			if !sameWidths(c[loc[0]:loc[1]], q) {
				// Case folding changed a character's width: offsets in c are not offsets in q.
				spans = append(spans, [2]int{0, len(q)})
				continue
			}
			for _, s := range purged {
				lo, hi := max(s[0], loc[0])-loc[0], min(s[1], loc[1])-loc[0]
				if lo < hi {
					spans = append(spans, [2]int{lo, hi})
				}
			}
		}
	}
	return replaceSpans(q, spans)
}

// sameWidths is whether a and b have the same characters' widths in bytes, one by one.
func sameWidths(a, b string) bool {
	for a != "" && b != "" {
		_, n := utf8.DecodeRuneInString(a)
		_, m := utf8.DecodeRuneInString(b)
		if n != m {
			return false
		}
		a, b = a[n:], b[m:]
	}
	return a == "" && b == ""
}

// redactText replaces with redactedMarker the union of every occurrence of patterns in
// s, overlapping ones included, and sets found[i] when patterns[i] occurs (found may be
// nil).
func redactText(s string, patterns []*regexp.Regexp, found []bool) string {
	return replaceSpans(s, spansOf(s, patterns, found))
}

// spansOf is every occurrence of patterns in s, overlapping ones included; it sets
// found[i] when patterns[i] occurs, unless found is nil.
func spansOf(s string, patterns []*regexp.Regexp, found []bool) [][2]int {
	var spans [][2]int
	for i, re := range patterns {
		for off := 0; off < len(s); {
			loc := re.FindStringIndex(s[off:])
			if loc == nil {
				break
			}
			if found != nil {
				found[i] = true
			}
			spans = append(spans, [2]int{off + loc[0], off + loc[1]})
			// The next occurrence may start inside this one.
			_, size := utf8.DecodeRuneInString(s[off+loc[0]:])
			off += loc[0] + size
		}
	}
	return spans
}

// replaceSpans replaces the union of spans in s with redactedMarker. A span's ends
// that fall inside a character widen to take all of it.
func replaceSpans(s string, spans [][2]int) string {
	if len(spans) == 0 {
		return s
	}
	for i := range spans {
		for spans[i][0] > 0 && !utf8.RuneStart(s[spans[i][0]]) {
			spans[i][0]--
		}
		for spans[i][1] < len(s) && !utf8.RuneStart(s[spans[i][1]]) {
			spans[i][1]++
		}
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[last:start])
		b.WriteString(redactedMarker)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}
