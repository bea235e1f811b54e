package memory

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// The words and entity rankings that recall fuses with the vector one (fuse.go). Dense
// embeddings blur what users most often need exactly: order numbers, codes, versions,
// rare names. Both rankings are single statements of one scope, queued in the vector
// read's round trip; each row carries its distance to the query vector too, so that a
// belief found by its words alone still shows how near it is.

// MaxQueryTerms bounds the terms of a text the words ranking looks for: a transcript of
// hundreds of words would otherwise match most of a scope. Terms with a digit (codes,
// numbers, versions) are kept first, then the longest.
const MaxQueryTerms = 32

// queryTermsSQL is the terms of the text in $T (a placeholder replaced by its parameter
// number), each behind its scope's prefix as migration 029 stores a belief's words
// (scopedWordsSQL): the text's tokens less English stop words (english_stem knows them;
// another language's pass, and only match more) and the user's own names, which nearly
// every belief of a scope holds.
const queryTermsSQL = `SELECT w.lexeme FROM unnest(` + scopedWordsSQL + `) w
	WHERE ts_lexize('english_stem', substr(w.lexeme, 9)) <> '{}' AND substr(w.lexeme, 9) <> 'user'
		AND substr(w.lexeme, 9) NOT IN (SELECT a.alias FROM entity_alias a WHERE a.scope = $1 AND a.entity = 'user')
	ORDER BY substr(w.lexeme, 9) ~ '[0-9]' DESC, length(w.lexeme) DESC, w.lexeme LIMIT %d`

// scopedWordsSQL is migration 029's words of the text in $T for the scope in $1: the
// 'simple' configuration's tokens, hyphens read as spaces, each behind 8 hex digits of
// the scope's md5.
const scopedWordsSQL = `regexp_replace(to_tsvector('simple'::regconfig, replace($T, '-', ' '))::text,
	'''([^'']+)''', '''' || left(md5($1), 8) || '\1''', 'g')::tsvector`

// rankQuery is one ranking of a scope's beliefs for a text: the beliefs of view (a
// condition on belief b, its arguments in args, the scope first), at most k, each with
// its distance to vec when embedded with model.
type rankQuery struct {
	view    string
	args    []any
	columns string
	text    string
	model   string
	vec     []float32
	k       int
}

// param is the placeholder of the i-th argument after q.args.
func (q rankQuery) param(i int) string { return fmt.Sprintf("$%d", len(q.args)+i) }

// distanceSQL is the distance of b to the query vector, in the i-th argument after
// q.args, the model in the next: null when b is embedded with another model or none.
func (q rankQuery) distance(i int) string {
	return fmt.Sprintf("CASE WHEN b.embed_model = %s THEN b.embedding <=> %s::vector END", q.param(i+1), q.param(i))
}

// vector is q's vector as a parameter: null when there is none.
func (q rankQuery) vector() any {
	if len(q.vec) == 0 {
		return nil
	}
	return pgvector.NewVector(q.vec)
}

// MaxTermBeliefs is how many of a scope's beliefs may hold a term for the words ranking
// to count it: a term more of them hold tells little apart (its inverse document
// frequency is low) and would cost a read of all of them. Terms held by more are left to
// the vector ranking.
const MaxTermBeliefs = 64

// queueWords queues the words ranking on b, into out once b is sent: the beliefs of
// q.view holding a term of q.text, best first, each with its share of the text's weight
// (the column words, 0..1): the weights of the terms it holds over those of every term
// counted. A term weighs ln(1 + MaxTermBeliefs/n), n the beliefs of the view holding it
// (BM25's inverse document frequency with MaxTermBeliefs for the scope's size, and no
// term counts or lengths: statements are a sentence each). Each term's beliefs are read
// up to MaxTermBeliefs + 1 only, on the GIN index of migration 030, so the read costs
// what the rare terms' beliefs do, not the scope's size. A text of no term reads nothing.
func queueWords(b *pgx.Batch, q rankQuery, out *[]Belief) {
	terms := strings.ReplaceAll(fmt.Sprintf(queryTermsSQL, MaxQueryTerms), "$T", q.param(1))
	sql := fmt.Sprintf(`WITH t AS MATERIALIZED (SELECT quote_literal(t.lexeme)::tsquery AS tq FROM (%[1]s) t),
		hits AS MATERIALIZED (SELECT h.ids FROM t CROSS JOIN LATERAL (SELECT array_agg(x.id) AS ids FROM (
			SELECT b.id FROM belief b WHERE %[8]s AND b.words @@ t.tq LIMIT %[3]d) x) h),
		kept AS MATERIALIZED (SELECT hits.ids, ln(1 + %[4]d / cardinality(hits.ids)::float8) AS w FROM hits
			WHERE cardinality(hits.ids) BETWEEN 1 AND %[4]d),
		s AS (SELECT u.id, sum(kept.w) / (SELECT sum(w) FROM kept) AS score
			FROM kept CROSS JOIN LATERAL unnest(kept.ids) u (id) GROUP BY u.id ORDER BY score DESC, u.id DESC LIMIT %[5]s)
		SELECT %[6]s, s.score AS words, %[7]s AS distance FROM s JOIN belief b ON b.scope = $1 AND b.id = s.id
		ORDER BY s.score DESC, b.id DESC`,
		terms, q.view, MaxTermBeliefs+1, MaxTermBeliefs, q.param(4), q.columns, q.distance(2), byWordsFirst(q.view))
	args := append(append([]any{}, q.args...), q.text, q.vector(), q.model, min(q.k, MaxWordsRanked))
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		var err error
		*out, err = pgx.CollectRows(rows, scanBelief)
		return err
	})
}

// byWordsFirst is view with its scope compared under the "C" collation, which no btree
// index of the scope is built with: a term's beliefs are then read from the words index
// alone, whose entries are the scope's already (029), where a plan that also read a btree
// of the scope built a bitmap of all its beliefs for each term. The equality is the same
// for every scope name, and Citus still routes it to the scope's shard.
func byWordsFirst(view string) string {
	return strings.Replace(view, "b.scope = $1 ", `b.scope = $1 COLLATE "C" `, 1)
}

// MaxWordsRanked bounds the beliefs the words and entity rankings each add to a read, of
// any k: what they add beyond the vector ranking's own is the few beliefs a code or a
// name points at.
const MaxWordsRanked = 10

// queueEntities queues the entity ranking on b, into out once b is sent: the beliefs of
// q.view about the entities whose names or aliases q.text says as words (the user
// aside: every scope is mostly about them), nearest to the query vector first, then the
// newest. The scope's names are few; the text is parsed once. When the text names none,
// the uncorrelated EXISTS is a one-time filter: the scope's beliefs are not read.
func queueEntities(b *pgx.Batch, q rankQuery, out *[]Belief) {
	sql := fmt.Sprintf(`WITH t AS MATERIALIZED (SELECT to_tsvector('simple'::regconfig, replace(%s, '-', ' ')) AS v),
		named AS MATERIALIZED (SELECT DISTINCT a.entity FROM entity_alias a, t
			WHERE a.scope = $1 AND a.entity <> 'user'
				AND t.v @@ phraseto_tsquery('simple'::regconfig, replace(a.alias, '-', ' ')))
		SELECT %s, %s AS distance FROM belief b
		WHERE EXISTS (SELECT 1 FROM named) AND %s AND b.entity IN (SELECT entity FROM named)
		ORDER BY distance NULLS LAST, b.valid_from DESC, b.id DESC LIMIT %s`,
		q.param(1), q.columns, q.distance(2), q.view, q.param(4))
	args := append(append([]any{}, q.args...), q.text, q.vector(), q.model, min(q.k, MaxWordsRanked))
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		var err error
		*out, err = pgx.CollectRows(rows, scanBelief)
		return err
	})
}
