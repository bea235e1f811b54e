package metrics

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCountResponses(t *testing.T) {
	t.Parallel()
	m := New()
	h := m.CountResponses(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/boom":
			w.WriteHeader(http.StatusInternalServerError)
			w.WriteHeader(http.StatusOK) // ignored by net/http: the first status counts
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	for _, path := range []string{"/", "/", "/missing", "/boom"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	s := scrapeOf(t, m)
	require.Equal(t, 2.0, s.value("credo_http_responses_total", "code=200"))
	require.Equal(t, 1.0, s.value("credo_http_responses_total", "code=404"))
	require.Equal(t, 1.0, s.value("credo_http_responses_total", "code=500"))
}
