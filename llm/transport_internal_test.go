package llm

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A provider keeps a connection for each concurrent worker, not Go's default two, so
// that its calls do not open new ones; a caller's own transport is used as it is.
func TestTransportKeepsIdleConnections(t *testing.T) {
	t.Parallel()
	limited, ok := Config{}.httpClient().Transport.(limitedTransport)
	require.True(t, ok)
	tr, ok := limited.next.(*http.Transport)
	require.True(t, ok)
	require.Equal(t, maxIdleConnsPerHost, tr.MaxIdleConnsPerHost)
	require.GreaterOrEqual(t, tr.MaxIdleConns, maxIdleConnsPerHost)
	require.NotSame(t, http.DefaultTransport, tr, "the default transport is not changed")

	own := &http.Transport{}
	limited, ok = Config{HTTPClient: &http.Client{Transport: own}}.httpClient().Transport.(limitedTransport)
	require.True(t, ok)
	require.Same(t, own, limited.next)
	require.Zero(t, own.MaxIdleConnsPerHost)
}
