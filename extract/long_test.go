package extract_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/testlog"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

// The facts of the long day: the first message says one, a message in the middle
// another, the last one the third.
var longFacts = []struct{ said, statement, attribute string }{
	{"I live in Porto", "User lives in Porto", "location"},
	{"I work as a luthier", "User works as a luthier", "occupation"},
	{"I adopted a parrot named Kiwi", "User has a parrot named Kiwi", "pet"},
}

// longDay is a conversation of about kb kilobytes in which the user says the facts at
// its start, middle and end, among small talk that says nothing durable.
func longDay(scope string, kb int) transcript.Transcript {
	topics := []string{"the weather turned again", "the train was late by twenty minutes", "a recipe for lentil soup",
		"the football match on Sunday", "which book to read next", "how to fix a squeaky door", "the price of coffee beans",
		"a documentary about whales", "plans for the weekend", "the noise from the street"}
	var msgs []string
	size := 0
	for i := 0; size < kb*1024; i++ {
		line := fmt.Sprintf("Message %d: we talked about %s, and I wondered whether %s matters at all on day %d.",
			i, topics[i%len(topics)], topics[(i*7+3)%len(topics)], i%31+1)
		msgs = append(msgs, line)
		size += len(line) + len("Noted.") + 20
	}
	msgs[0] = longFacts[0].said + ", by the river. " + msgs[0]
	msgs[len(msgs)/2] = longFacts[1].said + " these days. " + msgs[len(msgs)/2]
	msgs[len(msgs)-1] += " Oh, and " + longFacts[2].said + "."
	return pipelinetest.T(scope, "long-day", "2026-05-02T20:00:00Z", msgs...)
}

// extractMarkers answers like a model that extracts each fact it reads in the part of
// the prompt between <transcript> and </transcript> (the part shown again is context only).
func extractMarkers(req llmtest.Request) llmtest.Reply {
	text := req.Prompt
	if i := strings.LastIndex(text, "\n<transcript>"); i >= 0 {
		text = text[i:]
	}
	var facts []pipelinetest.Fact
	for _, f := range longFacts {
		if strings.Contains(text, f.said) {
			facts = append(facts, pipelinetest.Fact{Statement: f.statement, Attribute: f.attribute, Quote: f.said})
		}
	}
	return llmtest.Reply{Content: pipelinetest.Answer(facts...)}
}

// A conversation of 110 KB keeps the facts of its start, middle and end, on native
// Ollama with a model of an 8k window and on an OpenAI-compatible server of 16k, with no
// setting but the server's; no prompt is sent that the server cuts or refuses.
func TestLongConversationLosesNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		provider string
		opts     []llmtest.Option
		config   func(*llm.Config)
	}{
		{"ollama 8k model", llm.ProviderOllama, []llmtest.Option{llmtest.WithContextLength(llmtest.DefaultChatModel, 8192)}, nil},
		{"ollama 32k model", llm.ProviderOllama, nil, nil},
		{"openai-compatible 16k", llm.ProviderOpenAI, []llmtest.Option{llmtest.WithContextLength(llmtest.DefaultChatModel, 16384)},
			func(c *llm.Config) { c.Context = 16384 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := pipelinetest.New(t, &pipelinetest.Options{Provider: c.provider, LLMOptions: c.opts, LLMConfig: c.config})
			p.LLM.Handle(extractMarkers)
			res := p.Enqueue(t, longDay("user:pt", 110))
			p.Drain(t)

			require.Equal(t, "applied", p.Episode(t, res.EpisodeIDs[0]).State)
			current, err := p.Store.Current(context.Background(), "user:pt")
			require.NoError(t, err)
			require.ElementsMatch(t, []string{longFacts[0].statement, longFacts[1].statement, longFacts[2].statement}, statements(current))

			chats := p.LLM.Chats()
			t.Logf("%d chat calls", len(chats)) // BENCHMARKS.md, row 1d
			require.Greater(t, len(chats), 1, "a transcript longer than the window goes in segments")
			for i, ch := range chats {
				require.Equal(t, 200, ch.Status, "chat %d was refused", i)
				require.False(t, ch.Cut, "chat %d was cut", i)
				require.Equal(t, ch.Tokens, ch.Evaluated, "chat %d: the server evaluated all it was sent", i)
				require.LessOrEqual(t, ch.Tokens, ch.Window, "chat %d", i)
			}
			require.Contains(t, chats[0].Prompt, "this is part 1")
			require.Contains(t, chats[1].Prompt, "\n<earlier>\n", "the messages before the cut are shown again")
			// Each fact was read in the transcript of exactly one prompt, and stored once.
			for _, f := range longFacts {
				n := 0
				for _, ch := range chats {
					body := ch.Prompt[strings.LastIndex(ch.Prompt, "\n<transcript>"):]
					n += strings.Count(body, f.said)
				}
				require.Equal(t, 1, n, "%q", f.said)
			}
		})
	}
}

// A model family whose tokenizer counts three times what credo estimates: Ollama cuts
// the first prompt; the cut is seen, the answer dropped, the segments made smaller, and
// every fact kept.
func TestCutPromptIsNeverApplied(t *testing.T) {
	t.Parallel()
	p := pipelinetest.New(t, &pipelinetest.Options{Provider: llm.ProviderOllama, LLMOptions: []llmtest.Option{
		llmtest.WithContextLength(llmtest.DefaultChatModel, 8192), llmtest.WithTokenizer(llmtest.Scaled(llmtest.O200k, 3))}})
	p.LLM.Handle(extractMarkers)
	res := p.Enqueue(t, longDay("user:pt", 40))
	p.Drain(t)

	require.Equal(t, "applied", p.Episode(t, res.EpisodeIDs[0]).State)
	current, err := p.Store.Current(context.Background(), "user:pt")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{longFacts[0].statement, longFacts[1].statement, longFacts[2].statement}, statements(current))
	cut := 0
	for _, ch := range p.LLM.Chats() {
		if ch.Cut {
			cut++
		}
	}
	require.Positive(t, cut, "the fake cut a prompt: the estimate was low on purpose")
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM belief WHERE statement = $1", longFacts[2].statement),
		"what a cut prompt's answer said was not stored")
}

// A segment that fails leaves the segments before it applied and where they ended; a
// retry goes on from there, and what was applied is not extracted again.
func TestSegmentsResumeWhereTheyStopped(t *testing.T) {
	t.Parallel()
	p := pipelinetest.New(t, &pipelinetest.Options{Provider: llm.ProviderOllama, MaxAttempts: 1,
		LLMOptions: []llmtest.Option{llmtest.WithContextLength(llmtest.DefaultChatModel, 8192)}})
	calls := 0
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		calls++
		if calls == 2 {
			return llmtest.Reply{Status: 400} // refused, for another reason than length: the episode fails now
		}
		return extractMarkers(req)
	})
	res := p.Enqueue(t, longDay("user:pt", 60))
	p.Drain(t)
	ep := p.Episode(t, res.EpisodeIDs[0])
	require.Equal(t, "failed", ep.State)
	require.Equal(t, 2, p.LLM.ChatCount(), "a 400 is not retried as transient")
	current, err := p.Store.Current(context.Background(), "user:pt")
	require.NoError(t, err)
	require.Equal(t, []string{longFacts[0].statement}, statements(current), "the first segment stays applied")

	ctx := context.Background()
	require.NoError(t, pgx.BeginFunc(ctx, p.Pool(), func(tx pgx.Tx) error {
		return extract.Retry(ctx, tx, p.Client, "user:pt", res.EpisodeIDs[0])
	}))
	p.Drain(t)
	require.Equal(t, "applied", p.Episode(t, res.EpisodeIDs[0]).State)
	current, err = p.Store.Current(ctx, "user:pt")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{longFacts[0].statement, longFacts[1].statement, longFacts[2].statement}, statements(current))
	for _, ch := range p.LLM.Chats()[2:] {
		body := ch.Prompt[strings.LastIndex(ch.Prompt, "\n<transcript>"):]
		require.NotContains(t, body, longFacts[0].said, "the applied segment is not extracted again")
	}
}

// The extraction log says which segment a prompt held and, at the last, how many there
// were: never "segments=0" for the first of several (issue 51, item 9).
func TestExtractionLogNamesSegments(t *testing.T) {
	t.Parallel()
	var logs testlog.Buffer
	p := pipelinetest.New(t, &pipelinetest.Options{Provider: llm.ProviderOllama,
		LLMOptions: []llmtest.Option{llmtest.WithContextLength(llmtest.DefaultChatModel, 8192)},
		Extract:    func(c *extract.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) }})
	p.LLM.Handle(extractMarkers)
	p.Enqueue(t, longDay("user:long", 40), pipelinetest.T("user:short", "short", "2026-05-02T20:00:00Z", longFacts[0].said))
	p.Drain(t)

	var long, short []string
	for line := range strings.Lines(logs.String()) {
		switch {
		case !strings.Contains(line, "msg=extracted"):
		case strings.Contains(line, "scope=user:long"):
			long = append(long, line)
		case strings.Contains(line, "scope=user:short"):
			short = append(short, line)
		}
	}
	require.Len(t, short, 1)
	require.Contains(t, short[0], " segments=1")
	require.NotContains(t, short[0], " segment=")
	require.Greater(t, len(long), 1, "a transcript longer than the window goes in segments")
	for i, line := range long {
		require.Regexp(t, fmt.Sprintf(` segment=%d\b`, i+1), line, "the index, from 1")
		if i < len(long)-1 {
			require.NotContains(t, line, " segments=", "the count is known at the last")
		}
	}
	require.Regexp(t, fmt.Sprintf(` segments=%d\b`, len(long)), long[len(long)-1])
}
