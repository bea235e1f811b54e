package memory

import (
	"fmt"
	"strings"
)

// The words and entity rankings that recall fuses with the vector one (fuse.go). Dense
// embeddings blur what users most often need exactly: order numbers, codes, versions,
// rare names. Both rankings are part of the vector read's statement (textRanksSQL); each
// row carries its distance to the query vector too, so that a belief found by its words
// alone still shows how near it is.

// MaxQueryTerms bounds the terms of a text the words ranking looks for: a transcript of
// hundreds of words would otherwise match most of a scope. Terms with a digit (codes,
// numbers, versions) are kept first, then the longest.
const MaxQueryTerms = 32

// queryTermsSQL is the terms of the text in $T (a placeholder replaced by its parameter
// number), each behind its scope's prefix as migration 029 stores a belief's words
// (scopedWordsSQL): the text's tokens less English stop words (english_stem knows them;
// another language's pass, and only match more), the user's own names, which nearly
// every belief of a scope holds, and the scope's common words (words_common.go).
const queryTermsSQL = `SELECT w.lexeme FROM unnest(` + scopedWordsSQL + `) w
	WHERE ts_lexize('english_stem', substr(w.lexeme, 9)) <> '{}' AND substr(w.lexeme, 9) <> 'user'
		AND substr(w.lexeme, 9) NOT IN (SELECT a.alias FROM entity_alias a WHERE a.scope = $1 AND a.entity = 'user')
		AND w.lexeme <> ALL (coalesce((SELECT c.words FROM scope_common_words c WHERE c.scope = $1), '{}'))
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

// MaxTermBeliefs is how many of a scope's beliefs may hold a term for the words ranking
// to count it: a term more of them hold tells little apart (its inverse document
// frequency is low) and would cost a read of all of them. Terms held by more are left to
// the vector ranking.
const MaxTermBeliefs = 64

// textRanksSQL is the words and the entity rankings of text over the beliefs of view, as
// the common table expressions s (id, score, rank) and e (id, rank) of a statement whose
// first free parameter is next, its arguments following; distance is the SQL of a
// belief b's distance to the query vector. Each ranking has at most min(k,
// MaxWordsRanked) beliefs.
//
// The words ranking is the beliefs of the view holding a term of text, each with its
// share of the text's weight (score, 0..1): the weights of the terms it holds over those
// of every term counted. A term weighs ln(1 + MaxTermBeliefs/n), n the beliefs of the view
// holding it (BM25's inverse document frequency with MaxTermBeliefs for the scope's size,
// and no term counts or lengths: statements are a sentence each). Each term's beliefs are
// read up to MaxTermBeliefs + 1 only, on the GIN index of migration 030, and the scope's
// common words are not read at all (words_common.go), so the read costs what the rare
// terms' beliefs do, not the scope's size. A text of no term reads nothing.
//
// The entity ranking is the beliefs of the view about the entities whose names or
// aliases text says as words (the user aside: every scope is mostly about them), nearest
// first, then the newest. The scope's names are few; when the text says none, the
// uncorrelated EXISTS is a one-time filter and the scope's beliefs are not read.
//
// Both go in the vector read's statement (nearestQuery.joinBack): the query vector and
// each belief's columns are sent or read once, which is most of what two statements of
// their own cost beside the vector read.
func textRanksSQL(view, text string, k, next int, distance string) (string, []any) {
	p := func(i int) string { return fmt.Sprintf("$%d", next+i) }
	terms := strings.ReplaceAll(fmt.Sprintf(queryTermsSQL, MaxQueryTerms), "$T", p(0))
	sql := fmt.Sprintf(`t AS MATERIALIZED (SELECT quote_literal(t.lexeme)::tsquery AS tq FROM (%[1]s) t),
		hits AS MATERIALIZED (SELECT h.ids FROM t CROSS JOIN LATERAL (SELECT array_agg(x.id) AS ids FROM (
			SELECT b.id FROM belief b WHERE %[6]s AND b.words @@ t.tq LIMIT %[3]d) x) h),
		kept AS MATERIALIZED (SELECT hits.ids, ln(1 + %[4]d / cardinality(hits.ids)::float8) AS w FROM hits
			WHERE cardinality(hits.ids) BETWEEN 1 AND %[4]d),
		s AS MATERIALIZED (SELECT x.id, x.score, row_number() OVER (ORDER BY x.score DESC, x.id DESC) AS rank FROM (
			SELECT u.id, sum(kept.w) / (SELECT sum(w) FROM kept) AS score
			FROM kept CROSS JOIN LATERAL unnest(kept.ids) u (id) GROUP BY u.id ORDER BY score DESC, u.id DESC LIMIT %[5]s) x),
		named AS MATERIALIZED (SELECT DISTINCT a.entity FROM entity_alias a
			WHERE a.scope = $1 AND a.entity <> 'user'
				AND to_tsvector('simple'::regconfig, replace(%[8]s, '-', ' ')) @@ phraseto_tsquery('simple'::regconfig, replace(a.alias, '-', ' '))),
		e AS MATERIALIZED (SELECT n.id, row_number() OVER (ORDER BY n.distance NULLS LAST, n.valid_from DESC, n.id DESC) AS rank FROM (
			SELECT b.id, b.valid_from, %[7]s AS distance FROM belief b
			WHERE EXISTS (SELECT 1 FROM named) AND %[2]s AND b.entity IN (SELECT entity FROM named)
			ORDER BY distance NULLS LAST, b.valid_from DESC, b.id DESC LIMIT %[5]s) n)`,
		terms, view, MaxTermBeliefs+1, MaxTermBeliefs, p(1), byWordsFirst(view), distance, p(0))
	return sql, []any{text, min(k, MaxWordsRanked)}
}

// splitRanks parts the rows of a fused read (nearestQuery.joinBack) into the vector
// ranking's, nearest first, and those only the text's rankings found, as fuse takes
// them.
func splitRanks(rows []Belief) (vector, text []Belief) {
	for _, b := range rows {
		if b.Match != nil && b.Match.VectorRank > 0 {
			vector = append(vector, b)
		} else {
			text = append(text, b)
		}
	}
	return vector, text
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
