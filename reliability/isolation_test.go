package reliability_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/learning"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

var (
	isolationMarks = []string{"alpha", "beta", "gamma", "delta"}
	speaker        = regexp.MustCompile(`This is (\w+)\. I have lived in (\w+) since (\d{4}-\d{2}-\d{2}) and I enjoy (\w+)\.`)
	scopeLine      = regexp.MustCompile(`(?m)^Scope: tenant:(\w+)$`)
	exampleLine    = regexp.MustCompile(`(?m)^(?:- Believed: |  Said: |  Changed to: )(.*)$`)
	markOf         = regexp.MustCompile(`\((alpha|beta|gamma|delta)\)`)
)

// isolationAnswer marks every statement with the name its transcript speaks for, so
// that a statement of one scope shown in another scope's prompt is seen at once.
func isolationAnswer(req llmtest.Request) llmtest.Reply {
	m := speaker.FindStringSubmatch(transcriptOf(req.Prompt))
	if m == nil {
		return llmtest.Reply{Content: llmtest.DefaultContent}
	}
	mark, city, since, hobby := m[1], m[2], m[3], m[4]
	live := pipelinetest.Fact{Statement: fmt.Sprintf("User lives in %s (%s)", city, mark), Attribute: "location", ValidFrom: since}
	for _, c := range candidatesOf(req.Prompt) {
		if strings.HasPrefix(c.Line, "User lives in ") {
			live.Resolves = &pipelinetest.Resolves{Index: c.Index, Action: "supersede", Reason: "temporal"}
		}
	}
	enjoy := pipelinetest.Fact{Statement: fmt.Sprintf("User enjoys %s (%s)", hobby, mark), Attribute: "hobby_" + hobby, ValidFrom: since}
	return llmtest.Reply{Content: pipelinetest.Answer(live, enjoy)}
}

// TestIsolation: in a run over several scopes with the same vocabulary, no prompt shows
// a candidate or an example of another scope, no read returns another scope's belief,
// and no revision links beliefs of two scopes.
func TestIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const k = 3 // fewer than a scope's beliefs: candidates come from the vector search
	p := pipelinetest.New(t, &pipelinetest.Options{Workers: 4, Extract: func(c *extract.Config) {
		c.MaxCandidates = k
		c.Examples = learning.NewRetriever(c.Store, 3, "")
	}})
	p.LLM.Handle(isolationAnswer)

	hobbies := []string{"chess", "tennis", "jazz", "hiking", "sailing", "painting"}
	base := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	var ts []transcript.Transcript
	for round := range hobbies {
		for s, mark := range isolationMarks {
			at := base.AddDate(0, round, s)
			says := fmt.Sprintf("This is %s. I have lived in %s since %s and I enjoy %s.", mark,
				cities[(round+s)%6], at.Format(time.DateOnly), hobbies[(round+2*s)%len(hobbies)])
			ts = append(ts, pipelinetest.T("tenant:"+mark, fmt.Sprintf("%s-%d", mark, round), at.Format(time.RFC3339), says))
		}
		p.Enqueue(t, ts[len(ts)-len(isolationMarks):]...)
		p.Drain(t)
	}
	pool := p.Schema.Pool
	require.Equal(t, len(ts), count(t, pool, "SELECT count(*) FROM episode WHERE state = 'applied'"))

	// Prompts.
	withExamples, withSearch := 0, 0
	for _, c := range asked(p.LLM) {
		scope := scopeLine.FindStringSubmatch(c.Prompt)
		require.NotNil(t, scope, "the prompt names its scope")
		mark := scope[1]
		cands := candidatesOf(c.Prompt)
		examples := exampleLine.FindAllStringSubmatch(c.Prompt, -1)
		for _, line := range append(lineTexts(cands), texts(examples)...) {
			marks := markOf.FindAllStringSubmatch(line, -1)
			require.NotEmpty(t, marks, "every statement is marked: %q", line)
			for _, m := range marks {
				require.Equal(t, mark, m[1], "a prompt of %s shows %q", mark, line)
			}
		}
		if len(examples) > 0 {
			withExamples++
		}
		if len(cands) == k {
			withSearch++
		}
	}
	require.Positive(t, withExamples, "some prompts showed worked examples")
	require.Positive(t, withSearch, "some prompts chose candidates by vector search")

	// Reads.
	now := time.Now()
	for _, mark := range isolationMarks {
		scope := "tenant:" + mark
		all, err := p.Store.All(ctx, scope)
		require.NoError(t, err)
		require.Len(t, all, 2*len(hobbies), "%s: a move and a hobby per episode", scope)
		current, err := p.Store.Current(ctx, scope)
		require.NoError(t, err)
		asOf, err := p.Store.AsOf(ctx, scope, now)
		require.NoError(t, err)
		knownAt, err := p.Store.KnownAt(ctx, scope, now)
		require.NoError(t, err)
		history, err := p.Store.History(ctx, current[0].ID)
		require.NoError(t, err)
		nearest, err := p.Store.Nearest(ctx, scope, llmtest.DefaultEmbedModel, llmtest.Embed("User lives in Lisbon and enjoys chess", llmtest.DefaultDim), 50)
		require.NoError(t, err)
		for name, bs := range map[string][]memory.Belief{"All": all, "Current": current, "AsOf": asOf, "KnownAt": knownAt, "History": history, "Nearest": nearest} {
			require.NotEmpty(t, bs, "%s of %s", name, scope)
			for _, b := range bs {
				require.Equal(t, scope, b.Scope, "%s of %s", name, scope)
				require.Contains(t, b.Statement, "("+mark+")", "%s of %s", name, scope)
			}
		}
		events, err := p.Store.Events(ctx, scope, 0)
		require.NoError(t, err)
		require.NotEmpty(t, events)
		for _, e := range events {
			require.Equal(t, scope, e.Scope)
			require.Contains(t, e.OldStatement, "("+mark+")")
		}
	}

	// Revisions.
	for _, q := range []string{
		`SELECT count(*) FROM belief a JOIN belief b ON a.superseded_by = b.id WHERE a.scope <> b.scope`,
		`SELECT count(*) FROM belief b JOIN episode e ON b.episode_id = e.id WHERE b.scope <> e.scope`,
		`SELECT count(*) FROM revision_event r JOIN belief b ON b.id = r.old_belief_id WHERE b.scope <> r.scope`,
		`SELECT count(*) FROM revision_event r JOIN belief b ON b.id = r.new_belief_id WHERE b.scope <> r.scope`,
		`SELECT count(*) FROM revision_event r JOIN episode e ON r.episode_id = e.id WHERE r.scope <> e.scope`,
		`SELECT count(*) FROM belief_conflict c JOIN belief b ON b.id = c.target_belief_id WHERE b.scope <> c.scope`,
	} {
		// Each joins rows of any two scopes, which on Citus is a repartition join, off
		// unless asked for (a placeholder setting on plain PostgreSQL).
		var n int
		require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL citus.enable_repartition_joins = on"); err != nil {
				return err
			}
			return tx.QueryRow(ctx, q).Scan(&n)
		}), q)
		require.Zero(t, n, q)
	}
	require.Equal(t, len(isolationMarks)*(len(hobbies)-1), count(t, pool, "SELECT count(*) FROM revision_event"),
		"each move after the first superseded the scope's own location")
}

func lineTexts(cs []candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Line
	}
	return out
}

func texts(ms [][]string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m[1]
	}
	return out
}
