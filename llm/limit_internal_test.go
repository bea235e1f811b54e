package llm

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLimitedTransport(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", 1000))
	}))
	t.Cleanup(srv.Close)
	for limit, wantErr := range map[int64]bool{999: true, 1000: false, 5000: false} {
		c := &http.Client{Transport: limitedTransport{next: http.DefaultTransport, limit: limit}}
		res, err := c.Get(srv.URL)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if wantErr {
			require.ErrorIs(t, err, ErrMalformedOutput, "limit %d", limit)
			require.LessOrEqual(t, int64(len(body)), limit, "never more than the limit is read")
			continue
		}
		require.NoError(t, err, "limit %d", limit)
		require.Len(t, body, 1000)
	}
}
