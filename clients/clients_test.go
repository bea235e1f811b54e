package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/webhook"
)

// The statements the fake model extracts; the clients' suites check them by these words.
const (
	nyc   = "User lives in New York City"
	miami = "User lives in Miami"
	pro   = "Account plan is Pro"
	free  = "Account plan is Free"
)

// updateEnv, set to 1, rewrites the TypeScript client's snapshot of the OpenAPI document
// and the types generated from it, instead of failing when the API changed.
const updateEnv = "CREDO_UPDATE_CLIENTS"

// world is a worker as a client sees it: one pipeline (River on the test database, the
// fake model) served by two APIs, one without a rate limit and one whose keys get a
// request every two seconds, so that a 429 is certain whatever the machine's speed.
type world struct {
	p       *pipelinetest.Pipeline
	url     string
	limited string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	p := pipelinetest.New(t, nil)
	p.LLM.Handle(script)
	return &world{p: p, url: serve(t, p, -1, 0), limited: serve(t, p, 0.5, 1)}
}

func serve(t *testing.T, p *pipelinetest.Pipeline, rate float64, burst int) string {
	t.Helper()
	hooks, err := webhook.NewWebhooks(webhook.Config{Pool: p.Pool(), SecretKey: "a test key of thirty-two characters or more",
		Guard: webhook.Guard{AllowPrivate: true}})
	require.NoError(t, err)
	srv, err := api.New(context.Background(), api.Config{Store: p.Store, Pool: p.Pool(), Jobs: p.Client, Embed: p.Provider, Chat: p.Provider,
		RateLimit: rate, RateBurst: burst, Webhooks: hooks})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

// key makes a key for the scopes under prefix with every right.
func (w *world) key(t *testing.T, prefix string) string {
	t.Helper()
	_, token, err := api.CreateKey(context.Background(), w.p.Schema.Pool, prefix, []string{prefix},
		[]api.Right{api.RightWrite, api.RightRead, api.RightOperate, api.RightPurge})
	require.NoError(t, err)
	return token
}

// script is the fake model: every answer follows from the prompt, so the suites, which
// run concurrently with nothing else, know what memory will hold.
func script(req llmtest.Request) llmtest.Reply {
	switch req.SchemaName {
	case prompts.ExtractionSchemaName:
		return llmtest.Reply{Content: pipelinetest.Answer(extraction(req.Prompt)...)}
	case prompts.AnswerSchemaName:
		return answer(req.Prompt)
	case "":
		// The examples' own chat model: it answers from the memory put in its prompt.
		if strings.Contains(req.Prompt, miami) {
			return llmtest.Reply{Content: "Pack sunscreen: Miami is hot."}
		}
		return llmtest.Reply{Content: "Noted."}
	}
	return llmtest.Reply{Content: llmtest.DefaultContent}
}

// extraction answers from the transcript alone: the worked examples above it quote
// earlier transcripts of the scope.
func extraction(prompt string) []pipelinetest.Fact {
	said := prompt[strings.LastIndex(prompt, "\n<transcript>\n")+1:]
	switch {
	case strings.Contains(said, "I live in New York City"):
		return []pipelinetest.Fact{{Statement: nyc, Attribute: "location", ValidFrom: "2026-01-15"}}
	case strings.Contains(said, "I moved to Miami last month"):
		return []pipelinetest.Fact{{Statement: miami, Attribute: "location", ValidFrom: "2026-02-20", Resolves: supersede(prompt, nyc)}}
	case strings.Contains(said, "I switched to the Free plan"):
		// The plan is authoritative: the engine refuses this and queues it for review.
		return []pipelinetest.Fact{{Statement: free, Attribute: "plan", Resolves: supersede(prompt, pro)}}
	}
	return nil
}

func supersede(prompt, statement string) *pipelinetest.Resolves {
	i := listed(prompt, statement)
	if i < 0 {
		return nil
	}
	return &pipelinetest.Resolves{Index: i, Action: "supersede", Reason: "temporal"}
}

// listed is the index N of the prompt's line "[N] statement (...", or -1.
func listed(prompt, statement string) int {
	m := regexp.MustCompile(`\[(\d+)\] ` + regexp.QuoteMeta(statement) + ` \(`).FindStringSubmatch(prompt)
	if m == nil {
		return -1
	}
	i, _ := strconv.Atoi(m[1])
	return i
}

func answer(prompt string) llmtest.Reply {
	question := prompt[strings.LastIndex(prompt, "\nQuestion: ")+1:]
	if strings.Contains(question, "fail on purpose") {
		return llmtest.Reply{Content: "not json"} // asked again twice, then a 502 model_failed
	}
	if i := listed(prompt, miami); i >= 0 {
		return llmtest.Reply{Content: `{"reasoning": "scripted", "answer": "Miami.", "citations": [` + strconv.Itoa(i) + `]}`}
	}
	return llmtest.Reply{Content: `{"reasoning": "scripted", "answer": "I don't know.", "citations": []}`}
}

// run runs a client's command in dir with env added, and fails with its output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s in %s:\n%s", name, strings.Join(args, " "), dir, out)
	t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// need finds a program the clients need, and fails (never skips) without it.
func need(t *testing.T, name, why string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	require.NoError(t, err, "%s is needed %s (.ci/run installs it)", name, why)
	return path
}

func TestClients(t *testing.T) {
	w := newWorld(t)
	pythonDir, err := filepath.Abs("python")
	require.NoError(t, err)
	tsDir, err := filepath.Abs("typescript")
	require.NoError(t, err)

	t.Run("versions", func(t *testing.T) {
		// The clients are versioned with the API.
		py, err := os.ReadFile(filepath.Join(pythonDir, "pyproject.toml"))
		require.NoError(t, err)
		require.Contains(t, string(py), "\nversion = \""+api.Version+"\"\n")
		initPy, err := os.ReadFile(filepath.Join(pythonDir, "credo", "__init__.py"))
		require.NoError(t, err)
		require.Contains(t, string(initPy), "\n__version__ = \""+api.Version+"\"\n")
		var pkg struct {
			Version string `json:"version"`
		}
		b, err := os.ReadFile(filepath.Join(tsDir, "package.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &pkg))
		require.Equal(t, api.Version, pkg.Version)
	})

	t.Run("every operation", func(t *testing.T) {
		// Each operation of the live document has its method in both clients, named in
		// the Python method's docstring and typed by its id in the TypeScript call (or
		// stream, for an answer that is not one JSON document).
		var doc struct {
			Paths map[string]map[string]struct {
				OperationID string `json:"operationId"`
			} `json:"paths"`
		}
		require.NoError(t, json.Unmarshal(w.document(t), &doc))
		py, err := os.ReadFile(filepath.Join(pythonDir, "credo", "client.py"))
		require.NoError(t, err)
		ts, err := os.ReadFile(filepath.Join(tsDir, "src", "index.ts"))
		require.NoError(t, err)
		n := 0
		for path, item := range doc.Paths {
			for method, op := range item {
				if path == api.OpenAPIPath {
					continue
				}
				n++
				require.Contains(t, string(py), "("+op.OperationID+")", "the Python client lacks %s %s", method, path)
				require.True(t, strings.Contains(string(ts), `this.call("`+op.OperationID+`"`) ||
					strings.Contains(string(ts), `this.stream("`+op.OperationID+`"`), "the TypeScript client lacks %s %s", method, path)
			}
		}
		require.GreaterOrEqual(t, n, 12, "the document's operations, read")
	})

	t.Run("python", func(t *testing.T) {
		python := need(t, "python3", "for the Python client's tests")
		run(t, pythonDir, w.env(t, "python/"), python, "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v")
	})

	t.Run("python without installing", func(t *testing.T) {
		// docs/api.md's way when pip cannot fetch a build backend: the checkout on
		// PYTHONPATH, from anywhere.
		python := need(t, "python3", "for the Python client")
		script := "import credo; print(credo.__file__); print(credo.Client().beliefs('python-path/ana').mode)"
		out := run(t, t.TempDir(), append(w.env(t, "python-path/"), "PYTHONPATH="+pythonDir), python, "-c", script)
		require.Equal(t, []string{filepath.Join(pythonDir, "credo", "__init__.py"), "current"}, strings.Fields(out))
	})

	t.Run("typescript", func(t *testing.T) {
		node := need(t, "node", "for the TypeScript client's tests")
		w.checkTypes(t, node, tsDir)
		run(t, tsDir, nil, node, "node_modules/typescript/bin/tsc", "-p", ".")
		tests, err := filepath.Glob(filepath.Join(tsDir, "test", "*.test.mjs"))
		require.NoError(t, err)
		require.NotEmpty(t, tests)
		run(t, tsDir, w.env(t, "typescript/"), node, append([]string{"--test"}, tests...)...)
	})

	t.Run("python example", func(t *testing.T) {
		python := need(t, "python3", "for the Python client's example")
		out := run(t, pythonDir, w.exampleEnv(t, "python-example/"), python, "examples/agent.py", "--scope", "python-example/ana",
			"I moved to Miami last month.", "Any tips for the weather where I live?")
		w.checkExample(t, out, "python-example/ana")
	})

	t.Run("typescript example", func(t *testing.T) {
		node := need(t, "node", "for the TypeScript client's example")
		out := run(t, tsDir, w.exampleEnv(t, "typescript-example/"), node, "examples/agent.mjs", "--scope", "typescript-example/ana",
			"I moved to Miami last month.", "Any tips for the weather where I live?")
		w.checkExample(t, out, "typescript-example/ana")
	})
}

// env is what a client's suite needs: the server, a key for the scopes under prefix, and
// the rate-limited server.
func (w *world) env(t *testing.T, prefix string) []string {
	return []string{"CREDO_URL=" + w.url, "CREDO_KEY=" + w.key(t, prefix), "CREDO_SCOPE_PREFIX=" + prefix,
		"CREDO_LIMITED_URL=" + w.limited}
}

// exampleEnv is an agent's: credo, and an OpenAI-compatible chat server (the fake).
func (w *world) exampleEnv(t *testing.T, prefix string) []string {
	return []string{"CREDO_URL=" + w.url, "CREDO_KEY=" + w.key(t, prefix), "OPENAI_BASE_URL=" + w.p.LLM.OpenAIURL(),
		"OPENAI_API_KEY=llmtest", "CHAT_MODEL=" + llmtest.DefaultChatModel}
}

// checkExample holds an example's run to the loop: the second turn's model call had the
// first turn's memory in its prompt, answered from it, and both turns were remembered.
func (w *world) checkExample(t *testing.T, out, scope string) {
	t.Helper()
	require.Contains(t, out, "Pack sunscreen: Miami is hot.")
	var asked []string
	for _, r := range w.p.LLM.Chats() {
		if r.SchemaName == "" && strings.Contains(r.Prompt, "Memory of "+scope+" ") {
			asked = append(asked, r.Prompt)
		}
	}
	require.Len(t, asked, 2, "one model call per turn, each with the scope's memory")
	require.NotContains(t, asked[0], miami, "nothing remembered before the first turn")
	require.Contains(t, asked[1], "- "+miami+" (since 2026-02-20)")
	require.Contains(t, asked[1], "Any tips for the weather where I live?")
	eps, err := w.p.Store.Episodes(context.Background(), memory.EpisodeQuery{Scope: scope})
	require.NoError(t, err)
	require.Len(t, eps, 2, "each turn written to memory")
	for _, e := range eps {
		require.Equal(t, memory.EpisodeApplied, e.State)
	}
}

// document is the live OpenAPI document.
func (w *world) document(t *testing.T) []byte {
	t.Helper()
	res, err := http.Get(w.url + api.OpenAPIPath)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", raw)
	return raw
}

// checkTypes holds the TypeScript client's snapshot of the OpenAPI document, and the
// types generated from it, to the live document, and lints the document.
func (w *world) checkTypes(t *testing.T, node, dir string) {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, "node_modules", "openapi-typescript"))
	require.NoError(t, err, "the TypeScript client's dev dependencies are needed: run npm ci in clients/typescript (.ci/run does)")

	var doc any
	require.NoError(t, json.Unmarshal(w.document(t), &doc))
	live, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	live = append(live, '\n')

	tmp := t.TempDir()
	liveFile := filepath.Join(tmp, "openapi.json")
	require.NoError(t, os.WriteFile(liveFile, live, 0o644))
	genFile := filepath.Join(tmp, "openapi.ts")
	run(t, dir, nil, node, filepath.Join(dir, "scripts", "generate.mjs"), liveFile, genFile)
	generated, err := os.ReadFile(genFile)
	require.NoError(t, err)

	snapshot, types := filepath.Join(dir, "openapi.json"), filepath.Join(dir, "src", "openapi.ts")
	if os.Getenv(updateEnv) == "1" {
		require.NoError(t, os.WriteFile(snapshot, live, 0o644))
		require.NoError(t, os.WriteFile(types, generated, 0o644))
	}
	const hint = "the API changed: " + updateEnv + "=1 scripts/test ./clients rewrites clients/typescript/openapi.json and src/openapi.ts"
	checked, err := os.ReadFile(snapshot)
	require.NoError(t, err)
	require.True(t, bytes.Equal(live, checked), "%s (openapi.json differs from the live document)", hint)
	checked, err = os.ReadFile(types)
	require.NoError(t, err)
	require.True(t, bytes.Equal(generated, checked), "%s (src/openapi.ts differs from the types generated from it)", hint)

	run(t, dir, nil, node, filepath.Join(dir, "scripts", "lint-openapi.mjs"), liveFile)
}

// TestTypeScriptInstallsFromItsFolder: `npm install /path/to/clients/typescript` in an
// agent's project gives a client it can import, built on install (the prepare script),
// offline with the folder's pinned dev dependencies; a folder without them says to run
// `npm ci` there, not an import that fails later with ERR_MODULE_NOT_FOUND.
func TestTypeScriptInstallsFromItsFolder(t *testing.T) {
	t.Parallel()
	node := need(t, "node", "for the TypeScript client")
	npm := need(t, "npm", "for the TypeScript client")
	tsDir, err := filepath.Abs("typescript")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(tsDir, "node_modules", "typescript"))
	require.NoError(t, err, "the TypeScript client's dev dependencies are needed: run npm ci in clients/typescript (.ci/run does)")

	// The folder as a checkout has it: no dist, no node_modules.
	folder := filepath.Join(t.TempDir(), "typescript")
	require.NoError(t, os.CopyFS(folder, os.DirFS(tsDir)))
	require.NoError(t, os.RemoveAll(filepath.Join(folder, "dist")))
	require.NoError(t, os.RemoveAll(filepath.Join(folder, "node_modules")))
	project := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"name": "agent", "version": "1.0.0", "type": "module"}`), 0o644))
	install := func() (string, error) {
		cmd := exec.Command(npm, "install", "--offline", "--no-audit", "--no-fund", folder)
		cmd.Dir = project
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := install()
	require.Error(t, err, "nothing to build it with")
	require.Contains(t, out, "run `npm ci` there first")

	// After `npm ci` in the folder (its dev dependencies, here linked from the checkout's).
	require.NoError(t, os.Symlink(filepath.Join(tsDir, "node_modules"), filepath.Join(folder, "node_modules")))
	out, err = install()
	require.NoError(t, err, "%s", out)
	got := run(t, project, nil, node, "--input-type=module", "-e", `import { Client } from "@credohq/credo"; console.log(typeof Client)`)
	require.Equal(t, "function", strings.TrimSpace(got))
}
