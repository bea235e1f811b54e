package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The worker serves the inspector on the API's listener, with the API's modes: on a
// loopback address without any key, to this machine without a key.
func TestServesTheInspector(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, b.getenv, io.Discard, func(addr string) { addrs <- addr }) }()
	addr := <-addrs
	resp, err := http.Get("http://" + addr + "/ui/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "default-src 'self'"))
	require.Contains(t, string(body), "<h1>Scopes</h1>")
	cancel()
	require.NoError(t, <-done)
}
