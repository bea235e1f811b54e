package llmtest_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	ollama "github.com/ollama/ollama/api"
	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

func chat(t *testing.T, p llm.Chatter, prompt string) string {
	t.Helper()
	resp, err := p.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}}})
	require.NoError(t, err)
	return resp.Content
}

func newOpenAI(t *testing.T, srv *llmtest.Server) *llm.OpenAI {
	t.Helper()
	p, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	return p
}

func newOllama(t *testing.T, srv *llmtest.Server) *llm.Ollama {
	t.Helper()
	p, err := llm.NewOllama(srv.OllamaConfig())
	require.NoError(t, err)
	return p
}

func TestOnPromptLongestMatchWins(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.OnPrompt("Miami", llmtest.Reply{Content: "short"})
	srv.OnPrompt("lives in Miami", llmtest.Reply{Content: "long"})
	srv.OnPrompt("Miami!", llmtest.Reply{Content: "bang"})
	p := newOpenAI(t, srv)

	require.Equal(t, "long", chat(t, p, "Alice lives in Miami now"))
	require.Equal(t, "short", chat(t, p, "Miami trip"))
	require.Equal(t, "long", chat(t, p, "she lives in Miami!"), "14 chars beats 6")
	require.JSONEq(t, llmtest.DefaultContent, chat(t, p, "nothing relevant"))

	// Replacing and removing rules.
	srv.OnPrompt("lives in Miami", llmtest.Reply{Content: "long2"})
	require.Equal(t, "long2", chat(t, p, "Alice lives in Miami"))
	srv.OnPrompt("lives in Miami")
	require.Equal(t, "short", chat(t, p, "Alice lives in Miami"))
}

func TestOnPromptSequence(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.OnPrompt("retry", llmtest.Reply{Content: "bad", FinishReason: "length"}, llmtest.Reply{Content: "good"})
	p := newOllama(t, srv)

	_, err := p.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "retry me"}}})
	require.ErrorIs(t, err, llm.ErrTruncated)
	require.Equal(t, "good", chat(t, p, "retry me"))
	require.Equal(t, "good", chat(t, p, "retry me"), "last reply repeats")
}

func TestScriptOrderAndPrecedence(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithDefaultReply(llmtest.Reply{Content: "default"}))
	p := newOpenAI(t, srv)
	require.Equal(t, "default", chat(t, p, "a"))

	srv.Script(llmtest.Reply{Content: "1"}, llmtest.Reply{Content: "2"}, llmtest.Reply{Content: "3"})
	srv.OnPrompt("special", llmtest.Reply{Content: "rule"})
	var got []string
	for _, prompt := range []string{"a", "special", "b", "c", "d"} {
		got = append(got, chat(t, p, prompt))
	}
	require.Equal(t, []string{"1", "rule", "2", "3", "3"}, got, "rules don't consume the script; last repeats")

	srv.Handle(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "handled:" + req.Prompt}
	})
	require.Equal(t, "handled:special", chat(t, p, "special"))
	srv.Handle(nil)
	require.Equal(t, "3", chat(t, p, "x"))

	srv.Reset()
	require.Empty(t, srv.Requests())
	require.Equal(t, "1", chat(t, p, "x"), "Reset rewinds the script")
	require.Len(t, srv.Chats(), 1)
}

func TestRecordsAcrossProviders(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	oa, ol := newOpenAI(t, srv), newOllama(t, srv)

	chat(t, oa, "one")
	chat(t, ol, "two")
	_, err := oa.Embed(context.Background(), []string{"x", "y"})
	require.NoError(t, err)
	_, err = ol.Embed(context.Background(), []string{"z"})
	require.NoError(t, err)

	reqs := srv.Requests()
	require.Len(t, reqs, 5)
	var kinds []string
	for _, r := range reqs {
		kinds = append(kinds, r.Provider+"/"+r.Kind)
		require.False(t, r.At.IsZero())
		require.Equal(t, http.StatusOK, r.Status)
	}
	// Ollama is asked for the chat model's window once, before its first chat.
	require.Equal(t, []string{"openai/chat", "ollama/show", "ollama/chat", "openai/embed", "ollama/embed"}, kinds)
	require.Equal(t, 2, srv.ChatCount())
	require.Equal(t, 2, srv.EmbedCount())
	require.Equal(t, [][]string{{"x", "y"}, {"z"}}, [][]string{srv.Embeds()[0].Inputs, srv.Embeds()[1].Inputs})

	// Copies: mutating the result doesn't touch the server's record.
	reqs[0].Model = "changed"
	require.Equal(t, llmtest.DefaultChatModel, srv.Requests()[0].Model)
}

func TestUnknownPathIs404AndRecorded(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	resp, err := http.Post(srv.URL()+"/v1/completions", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "/v1/completions", reqs[0].Path)
	require.Equal(t, http.StatusNotFound, reqs[0].Status)
	require.Empty(t, reqs[0].Kind)
}

func TestOllamaClientMetadataAndStreaming(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithModels("qwen2.5:7b", "nomic-embed-text", "llama3.2"))
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	client := ollama.NewClient(u, http.DefaultClient)

	version, err := client.Version(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, version)

	list, err := client.List(context.Background())
	require.NoError(t, err)
	var names []string
	for _, m := range list.Models {
		names = append(names, m.Name)
	}
	require.Equal(t, []string{"qwen2.5:7b", "nomic-embed-text", "llama3.2"}, names)
	require.NoError(t, client.Heartbeat(context.Background()))

	// Stream left unset (the client's default, true): one final line.
	srv.Script(llmtest.Reply{Content: "streamed"})
	var calls int
	var final ollama.ChatResponse
	err = client.Chat(context.Background(), &ollama.ChatRequest{
		Model:    "qwen2.5:7b",
		Messages: []ollama.Message{{Role: "user", Content: "hi"}},
	}, func(r ollama.ChatResponse) error {
		calls++
		final = r
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 1, calls)
	require.True(t, final.Done)
	require.Equal(t, "streamed", final.Message.Content)
	require.Nil(t, srv.Chats()[0].Stream)
	require.Nil(t, srv.Chats()[0].Temperature, "not sent, not recorded")
}

func TestOpenAIEmbeddingEncodings(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithDim(16))
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.OpenAIURL()
	client := openai.NewClientWithConfig(cfg)

	inputs := []string{"alpha beta", "gamma"}
	byFormat := map[openai.EmbeddingEncodingFormat][][]float32{}
	for _, format := range []openai.EmbeddingEncodingFormat{"", openai.EmbeddingEncodingFormatFloat, openai.EmbeddingEncodingFormatBase64} {
		resp, err := client.CreateEmbeddings(context.Background(), openai.EmbeddingRequestStrings{Input: inputs, Model: "e", EncodingFormat: format})
		require.NoError(t, err, "format %q", format)
		require.Len(t, resp.Data, len(inputs))
		for i, d := range resp.Data {
			require.Equal(t, i, d.Index)
			byFormat[format] = append(byFormat[format], d.Embedding)
		}
	}
	want := [][]float32{llmtest.Embed("alpha beta", 16), llmtest.Embed("gamma", 16)}
	require.Equal(t, want, byFormat[""])
	require.Equal(t, want, byFormat[openai.EmbeddingEncodingFormatFloat])
	require.Equal(t, want, byFormat[openai.EmbeddingEncodingFormatBase64], "base64 round-trips exactly")

	var formats []string
	for _, r := range srv.Embeds() {
		formats = append(formats, r.EncodingFormat)
	}
	require.Equal(t, []string{"", "float", "base64"}, formats)

	_, err := client.CreateEmbeddings(context.Background(), openai.EmbeddingRequestStrings{Input: inputs, Model: "e", EncodingFormat: "int8"})
	require.Error(t, err)
}

func TestFailEmbeds(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	p := newOllama(t, srv)
	embed := func() error {
		_, err := p.Embed(context.Background(), []string{"x"})
		return err
	}

	srv.FailEmbeds(http.StatusTooManyRequests, -1)
	for range 3 {
		err := embed()
		require.True(t, llm.IsRetryable(err), "%v", err)
	}
	srv.FailEmbeds(0, 0)
	require.NoError(t, embed())

	srv.FailEmbeds(http.StatusBadRequest, 1)
	err := embed()
	require.Error(t, err)
	require.False(t, llm.IsRetryable(err))
	require.NoError(t, embed())

	var statuses []int
	for _, r := range srv.Embeds() {
		statuses = append(statuses, r.Status)
	}
	require.Equal(t, []int{429, 429, 429, 200, 400, 200}, statuses)
}

func TestEmbedGeometry(t *testing.T) {
	t.Parallel()
	const dim = 256
	a := llmtest.Embed("The user lives in Miami", dim)
	require.Len(t, a, dim)
	var norm float64
	for _, x := range a {
		norm += float64(x) * float64(x)
	}
	require.InDelta(t, 1, math.Sqrt(norm), 1e-5, "L2-normalized")

	require.Equal(t, a, llmtest.Embed("the USER lives, in miami!", dim), "case and punctuation don't matter")
	require.InDelta(t, 1, llmtest.Cosine(a, llmtest.Embed("The user lives in Miami", dim)), 1e-6)

	related := llmtest.Cosine(a, llmtest.Embed("The user moved to Miami", dim))
	unrelated := llmtest.Cosine(llmtest.Embed("lives Miami", dim), llmtest.Embed("enjoys chess tournaments", dim))
	require.Greater(t, related, 0.5, "sharing most words")
	require.Less(t, math.Abs(unrelated), 0.25, "no shared words")
	require.Greater(t, related, unrelated)

	// Without anchors, synonyms are unrelated; with them, close.
	anchors := map[string]string{"Miami": "Florida"}
	miami, florida := llmtest.Embed("Miami", dim), llmtest.Embed("Florida", dim)
	require.Less(t, math.Abs(llmtest.Cosine(miami, florida)), 0.25)
	miamiA, floridaA := llmtest.EmbedAnchored("Miami", dim, anchors), llmtest.EmbedAnchored("Florida", dim, anchors)
	require.Greater(t, llmtest.Cosine(miamiA, floridaA), 0.95)

	require.NotContains(t, fmt.Sprint(llmtest.Embed("", 8)), "NaN", "no words still embeds")
	require.Nil(t, llmtest.Embed("x", 0))
}

func TestServerAnchorsOption(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithAnchors(map[string]string{"miami": "florida"}), llmtest.WithDim(128))
	p := newOpenAI(t, srv)
	resp, err := p.Embed(context.Background(), []string{"User lives in Miami", "User lives in Florida", "User owns a boat"})
	require.NoError(t, err)
	v := resp.Vectors
	require.Greater(t, llmtest.Cosine(v[0], v[1]), 0.95, "sentences differing by synonyms")
	require.Greater(t, llmtest.Cosine(v[0], v[1]), llmtest.Cosine(v[0], v[2]))
}

// Many workers hitting one server at once, as River would. Run with -race.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	const workers = 16
	for i := range workers {
		srv.OnPrompt(fmt.Sprintf("<transcript %02d>", i), llmtest.Reply{Content: fmt.Sprintf(`{"worker":%d}`, i)})
	}
	providers := []llm.Provider{newOpenAI(t, srv), newOllama(t, srv)}

	const perWorker = 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker*2)
	for i := range workers {
		wg.Go(func() {
			p := providers[i%2]
			for range perWorker {
				resp, err := p.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("<transcript %02d>", i)}}})
				if err != nil {
					errs <- err
					continue
				}
				if want := fmt.Sprintf(`{"worker":%d}`, i); resp.Content != want {
					errs <- fmt.Errorf("worker %d got %q", i, resp.Content)
				}
				er, err := p.Embed(context.Background(), []string{fmt.Sprintf("statement %d", i)})
				if err != nil {
					errs <- err
					continue
				}
				if len(er.Vectors) != 1 || len(er.Vectors[0]) != llmtest.DefaultDim {
					errs <- fmt.Errorf("worker %d: bad vectors", i)
				}
			}
		})
	}
	// Read the recordings while writers are busy; -race checks the locking.
	for range 20 {
		_ = srv.Requests()
		_ = srv.ChatCount()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, workers*perWorker, srv.ChatCount())
	require.Equal(t, workers*perWorker, srv.EmbedCount())
	// Ollama's provider asked /api/show once for its window (twice at most, if two
	// first calls raced).
	require.InDelta(t, 2*workers*perWorker+1, len(srv.Requests()), 1)
}
