package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/llm"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// Tracing is on only when an endpoint or an exporter is named, and off again by the
// SDK's own switch or the none exporter.
func TestFromEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env          map[string]string
		enabled, rec bool
	}{
		{env: nil},
		{env: map[string]string{"OTEL_SERVICE_NAME": "credo", "OTEL_TRACES_SAMPLER": "always_on"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, enabled: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, enabled: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, enabled: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_CREDO_RECORD_SCOPE": "true"}, enabled: true, rec: true},
	} {
		cfg := tracing.FromEnv(env(tc.env))
		require.Equal(t, tc.enabled, cfg.Enabled, "%v", tc.env)
		require.Equal(t, tc.rec, cfg.RecordScope, "%v", tc.env)
	}
}

// A bad value fails at start, naming its variable.
func TestBadEnvironment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_CREDO_RECORD_SCOPE": "yes please"}, `OTEL_CREDO_RECORD_SCOPE: "yes please" is not true or false`},
		{map[string]string{"OTEL_SDK_DISABLED": "maybe"}, "OTEL_SDK_DISABLED"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, `OTEL_TRACES_EXPORTER: "zipkin" is not otlp, console or none`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/xml"},
			`OTEL_EXPORTER_OTLP_PROTOCOL: "http/xml" is not grpc, http/protobuf or http/json`},
		// The SDK would only warn and sample everything.
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "sometimes"},
			`OTEL_TRACES_SAMPLER: "sometimes" is not always_on`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
			`OTEL_TRACES_SAMPLER_ARG: "2" is not a ratio from 0 to 1`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "udp"},
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
	} {
		_, err := tracing.New(ctx, tracing.FromEnv(env(tc.env)))
		require.ErrorContains(t, err, tc.want, "%v", tc.env)
	}
}

// Off, nothing is installed: every front end gets back what it gave, and a stage's
// span allocates nothing.
func TestOffInstallsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr, err := tracing.New(ctx, tracing.FromEnv(env(nil)))
	require.NoError(t, err)
	require.False(t, tr.Enabled())

	mux := http.NewServeMux()
	require.Same(t, mux, tr.Handler(mux))
	require.Nil(t, tr.RiverMiddleware())
	p, err := llm.NewOpenAI(llm.Config{BaseURL: "http://127.0.0.1:1/v1", ChatModel: "m", EmbedModel: "e"})
	require.NoError(t, err)
	require.Same(t, p, tr.WrapProvider(p))
	pc, err := pgxpool.ParseConfig("postgres://u@127.0.0.1:1/db")
	require.NoError(t, err)
	tr.ConfigurePool(pc)
	require.Nil(t, pc.ConnConfig.Tracer)

	rootCtx, root := tr.Root(ctx, "beliefs list")
	require.False(t, root.IsRecording())
	require.Empty(t, tracing.Carry(rootCtx))
	require.NoError(t, tr.Shutdown(ctx))

	var none *tracing.Tracing
	require.False(t, none.Enabled())
	require.NoError(t, none.Shutdown(ctx))
}

// Off, a stage's span costs no allocation (AllocsPerRun needs the test alone).
func TestOffStageAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		sctx, span := tracing.Start(ctx, "extract.apply", tracing.FactsKey.Int(3))
		tracing.SetScope(span, "alice")
		_ = tracing.Carry(sctx)
		ectx, episode := tracing.StartFrom(sctx, "extract.episode", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
			tracing.EpisodeKey.Int64(7))
		tracing.End(episode, nil)
		tracing.End(span, context.Canceled)
		_ = ectx
	})
	require.Zero(t, allocs)
}

// BenchmarkStageOff is what a stage's span costs with tracing off: a context lookup.
func BenchmarkStageOff(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sctx, span := tracing.Start(ctx, "extract.apply", tracing.FactsKey.Int(3))
		tracing.SetScope(span, "alice")
		_ = tracing.Carry(sctx)
		tracing.End(span, nil)
	}
}

// OTEL_EXPORTER_OTLP_PROTOCOL=http/json exports JSON over HTTP, as the SDK's HTTP
// exporter can (autoexport knows only grpc and http/protobuf).
func TestHTTPJSONExport(t *testing.T) {
	type got struct{ contentType, body string }
	received := make(chan got, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- got{r.Header.Get("Content-Type"), string(body)}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}
	for k, v := range env {
		t.Setenv(k, v) // the SDK's exporter reads the process environment
	}
	ctx := context.Background()
	tr, err := tracing.New(ctx, tracing.FromEnv(func(k string) string { return env[k] }))
	require.NoError(t, err)
	_, span := tr.Root(ctx, "json-export")
	span.End()
	require.NoError(t, tr.Shutdown(ctx))
	select {
	case g := <-received:
		require.Equal(t, "application/json", g.contentType)
		require.Contains(t, g.body, `"json-export"`)
	default:
		t.Fatal("nothing exported")
	}
}
