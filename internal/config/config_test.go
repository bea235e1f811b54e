package config

import (
	"flag"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/credohq/credo/internal/tracing"
)

func load(t *testing.T, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg, err := Load(fs, GroupDB|GroupLLM|GroupWorker|GroupConsolidate, func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return cfg, cfg.Check(GroupDB | GroupLLM | GroupWorker | GroupConsolidate)
}

func TestLoad(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, map[string]string{"DATABASE_URL": "postgres://x", "JOB_TIMEOUT": "90s", "HTTP_ADDR": "off"})
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, cfg.JobTimeout)
	require.Equal(t, 150*time.Second, cfg.RescueAfter, "RESCUE_AFTER defaults a little above JOB_TIMEOUT")
	require.Equal(t, "ollama", cfg.EmbedProvider, "EMBED_PROVIDER defaults to LLM_PROVIDER")
	require.Empty(t, cfg.HTTPAddr, "off")
	require.False(t, cfg.SecureCookies(), "no PUBLIC_URL: Secure only over TLS")
	require.Equal(t, 12*time.Hour, cfg.InspectorSessionTTL)

	cfg, err = load(t, map[string]string{"DATABASE_URL": "postgres://x", "PUBLIC_URL": "https://credo.example.com/"})
	require.NoError(t, err)
	require.True(t, cfg.SecureCookies(), "browsers reach the worker over https")

	cfg, err = load(t, map[string]string{"DATABASE_URL": "postgres://x", "WORKERS": "2"}, "--workers", "7")
	require.NoError(t, err)
	require.Equal(t, 7, cfg.Workers, "a flag overrides its variable")
}

func TestLoadNamesTheBadVariable(t *testing.T) {
	t.Parallel()
	for env, want := range map[string]string{
		"JOB_TIMEOUT":           "JOB_TIMEOUT: \"soon\" is not a positive duration",
		"WORKERS":               "WORKERS: \"soon\" is not a whole number",
		"LLM_PROVIDER":          "LLM_PROVIDER: \"soon\" is not one of ollama, openai",
		"OLLAMA_HOST":           "OLLAMA_HOST: \"soon\" is not an http(s) URL",
		"CONFIDENCE_FLOOR":      "CONFIDENCE_FLOOR: \"soon\" is not a number",
		"PUBLIC_URL":            "PUBLIC_URL: \"soon\" is not an http(s) URL",
		"INSPECTOR_SESSION_TTL": "INSPECTOR_SESSION_TTL: \"soon\" is not a positive duration",
	} {
		_, err := load(t, map[string]string{"DATABASE_URL": "postgres://x", env: "soon"})
		require.ErrorContains(t, err, want)
	}
	_, err := load(t, map[string]string{"DATABASE_URL": "postgres://x", "JOB_TIMEOUT": "5m", "RESCUE_AFTER": "1m"})
	require.ErrorContains(t, err, "RESCUE_AFTER")
	_, err = load(t, map[string]string{})
	require.ErrorContains(t, err, "DATABASE_URL is required")
	_, err = load(t, map[string]string{"DATABASE_URL": "localhost:5432/credo"})
	require.ErrorContains(t, err, "DATABASE_URL: ")
	require.ErrorContains(t, err, "expected a URL like postgres://user@host:5432/db", "an unparseable URL shows the form it takes")
	require.True(t, IsUsage(err), "and is bad configuration")
	// Another database's URL is said to be one, with no password masked that it has not.
	for _, url := range []string{"mysql://root@db:3306/credo", "MySQL://root:secret@db/credo", "sqlite:///var/credo.db"} {
		_, err = load(t, map[string]string{"DATABASE_URL": url})
		require.ErrorContains(t, err, "is not PostgreSQL's: credo runs on PostgreSQL", url)
		require.NotContains(t, err.Error(), "xxxxxx", url)
		require.NotContains(t, err.Error(), "secret", url)
		require.True(t, IsUsage(err))
	}
	_, err = load(t, map[string]string{"DATABASE_URL": "postgresql://x"})
	require.NoError(t, err)
}

// TestComposePassesEverySetting: the compose file hands every worker setting through,
// so the README's "pass any setting as an environment variable" holds there too.
func TestComposePassesEverySetting(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Environment map[string]any `yaml:"environment"`
			Healthcheck map[string]any `yaml:"healthcheck"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	worker, ok := compose.Services["worker"]
	require.True(t, ok)
	require.NotEmpty(t, worker.Healthcheck)
	for _, s := range settings() {
		if s.group&(GroupDB|GroupLLM|GroupWorker|GroupConsolidate|GroupRetention) == 0 {
			continue
		}
		require.Contains(t, worker.Environment, s.env, "docker-compose.yml's worker does not pass %s", s.env)
	}
	for _, env := range tracing.Variables {
		require.Contains(t, worker.Environment, env, "docker-compose.yml's worker does not pass %s", env)
	}
}

func TestRetainHistory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env, flag string
		want      time.Duration
		err       string
	}{
		{want: 0},
		{env: "8760h", want: 8760 * time.Hour},
		{env: " 1h ", want: time.Hour},
		{env: "8760h", flag: "720h", want: 720 * time.Hour},
		{env: "8760", err: `RETAIN_HISTORY: "8760" is not a duration of at least 1h with its unit, like 720h or 8760h`},
		{env: "30m", err: `RETAIN_HISTORY: "30m" is not a duration of at least 1h`},
		{env: "0", err: `RETAIN_HISTORY: "0" is not a duration of at least 1h`},
		{env: "-8760h", err: `RETAIN_HISTORY: "-8760h" is not a duration of at least 1h`},
		{env: "a year", err: `RETAIN_HISTORY: "a year" is not a duration`},
		{flag: "8760", err: `invalid value "8760" for flag -retain-history: "8760" is not a duration of at least 1h`},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		cfg, err := Load(fs, GroupRetention, func(k string) string { return map[string]string{"RETAIN_HISTORY": tc.env}[k] })
		if err == nil && tc.flag != "" {
			err = fs.Parse([]string{"--retain-history", tc.flag})
		}
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "env %q, flag %q", tc.env, tc.flag)
			continue
		}
		require.NoError(t, err)
		require.NoError(t, cfg.Check(GroupRetention))
		require.Equal(t, tc.want, cfg.RetainHistory, "env %q, flag %q", tc.env, tc.flag)
	}
}

// The compose file pins every image: a rebuild runs what was tested.
func TestComposePinsEveryImage(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	images := regexp.MustCompile(`(?m)^\s+image:\s*(\S+)`).FindAllStringSubmatch(string(raw), -1)
	require.NotEmpty(t, images)
	for _, m := range images {
		tag := m[1][strings.LastIndex(m[1], ":")+1:]
		require.Regexp(t, `\d+\.\d+`, tag, "%s is not pinned to a version", m[1])
	}
}
