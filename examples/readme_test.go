package examples_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
)

// TestREADMEQuickstart follows the README's "Without Docker" lines word for word, with
// the test's database and the wire-level fake standing in for Ollama.
func TestREADMEQuickstart(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)<!-- readme-quickstart[^>]*-->\n```sh\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, block, "the README marks its quickstart lines")

	schema := dbtest.New(t)
	srv := llmtest.NewServer(t)
	srv.Handle(func(req llmtest.Request) llmtest.Reply {
		switch {
		case strings.Contains(req.Prompt, "I live in Brooklyn"):
			return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User lives in New York City", Attribute: "location"})}
		case strings.Contains(req.Prompt, "I moved to Miami last month"):
			f := pipelinetest.Fact{Statement: "User lives in Miami", Attribute: "location", ValidFrom: "2026-02-28"}
			if strings.Contains(req.Prompt, "\n[0] User lives in New York City") {
				f.Resolves = &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}
			}
			return llmtest.Reply{Content: pipelinetest.Answer(f)}
		}
		return llmtest.Reply{Content: pipelinetest.Answer()}
	})

	// The README's commands run in a copy's place: bin/ goes to a temporary directory,
	// and DATABASE_URL is the test's schema.
	bin := t.TempDir()
	script := strings.NewReplacer("-o bin/", "-o "+bin+"/", "bin/", bin+"/").Replace(string(block[1]))
	script = regexp.MustCompile(`(?m)^export DATABASE_URL=.*$`).ReplaceAllString(script, "export DATABASE_URL='"+schema.URL+"'")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+srv.URL(), "WORKERS=1", "HTTP_ADDR=off", "LOG_LEVEL=warn",
		"PATH="+os.Getenv("PATH")+string(filepath.ListSeparator)+"/usr/local/go/bin")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "enqueued 4, duplicates 0")
	require.Regexp(t, `(?m)^\d+\s+active\s+location\s+User lives in Miami`, string(out), "the list shows where Ana lives now")
	require.NotContains(t, string(out), "New York City", "and not where she lived before")
}
