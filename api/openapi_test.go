package api

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// TestOpenAPI: the document served at /v1/openapi.json validates, documents every route
// served under /v1 and nothing else, and every documented operation is served.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", allRights...)
	r := h.do("GET", OpenAPIPath, "", nil) // no key needed
	require.Equal(t, 200, r.Status, "%s", r)

	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(r.Body)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	require.Equal(t, "3.1.0", doc.OpenAPI)
	require.Equal(t, "/", doc.Servers[0].URL, "served beside the document")

	var documented []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			documented = append(documented, method+" "+path)
			require.NotEmpty(t, op.OperationID, "%s %s", method, path)
			require.NotEmpty(t, op.Summary, "%s %s", method, path)
			if path == OpenAPIPath {
				require.NotNil(t, op.Security)
				require.Empty(t, *op.Security, "the document is public")
				continue
			}
			require.NotNil(t, op.Security, "%s %s needs a key", method, path)
			for _, status := range []string{"401", "429", "500"} {
				resp := op.Responses.Value(status)
				require.NotNil(t, resp, "%s %s documents %s", method, path, status)
				require.Equal(t, "#/components/schemas/Error", resp.Value.Content.Get("application/json").Schema.Ref)
			}
			require.Nil(t, op.Responses.Value("422"), "invalid input is answered 400")
		}
	}
	var served []string
	for _, pattern := range h.api.routes {
		if pattern == "/v1/" || pattern == MCPPath {
			continue // the answers of unknown routes, and MCP's own protocol
		}
		served = append(served, pattern)
	}
	slices.Sort(documented)
	slices.Sort(served)
	require.Equal(t, served, documented)

	// Every documented operation answers, with a key, as an operation and not as an
	// unknown route or method.
	param := regexp.MustCompile(`\{[^}]+\}`)
	for _, route := range documented {
		method, path, _ := strings.Cut(route, " ")
		var body any
		if method == http.MethodPost {
			body = map[string]any{}
		}
		res := h.do(method, param.ReplaceAllString(path, "1")+"?scope=tenant:a/x", key, body)
		require.NotEqual(t, http.StatusMethodNotAllowed, res.Status, "%s: %s", route, res)
		if res.Status == http.StatusNotFound {
			require.Equal(t, CodeNotFound, res.code(t), "%s: %s", route, res)
		}
	}
	// And what huma would serve by default is not served.
	for _, path := range []string{"/v1/openapi.yaml", "/v1/openapi-3.0.json", "/v1/docs", "/v1/schemas/Belief.json", "/openapi.json", "/docs"} {
		res := h.do("GET", path, key, nil)
		require.Equal(t, 404, res.Status, path)
		if strings.HasPrefix(path, "/v1/") {
			require.Equal(t, CodeNoRoute, res.code(t), path)
		}
	}
}

// TestChangeTypesDocumented: the feed's types and those a webhook may subscribe to, as
// the document lists them, are every kind memory announces.
func TestChangeTypesDocumented(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.do("GET", OpenAPIPath, "", nil)
	require.Equal(t, 200, r.Status, "%s", r)
	doc, err := openapi3.NewLoader().LoadFromData(r.Body)
	require.NoError(t, err)
	want := make([]any, len(memory.ChangeKinds))
	for i, k := range memory.ChangeKinds {
		want[i] = string(k)
	}
	schemas := doc.Components.Schemas
	require.Equal(t, want, schemas["ChangeItem"].Value.Properties["type"].Value.Enum)
	require.Equal(t, want, schemas["WebhookRequest"].Value.Properties["events"].Value.Items.Value.Enum)
	require.Equal(t, want, schemas["Webhook"].Value.Properties["events"].Value.Items.Value.Enum)
}
