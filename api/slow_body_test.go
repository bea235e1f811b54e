package api

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// slowRequest sends a POST's headers and 8 of its 100 body bytes, then stops, and
// returns the answer's status and whether the server then closed the connection.
func slowRequest(t *testing.T, addr, key string) (status int, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /v1/forget HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\n"+
		"Authorization: Bearer "+key+"\r\nContent-Length: 100\r\n\r\n{\"scope\":")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the server answers")
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	// A closed connection reads EOF, or a reset, at once; an open one would time out.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(3*time.Second)))
	_, err = conn.Read(make([]byte, 1))
	var ne net.Error
	return res.StatusCode, err != nil && (!errors.As(err, &ne) || !ne.Timeout())
}

// A body too slow to arrive is a 408 and its connection closes; a request with an
// invalid key is refused before its body is read, and its connection closes too.
func TestSlowBodies(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.BodyReadTimeout = 300 * time.Millisecond })
	key := h.key("tenant:a/", RightOperate)
	u, err := url.Parse(h.http.URL)
	require.NoError(t, err)

	status, closed := slowRequest(t, u.Host, key)
	require.Equal(t, http.StatusRequestTimeout, status)
	require.True(t, closed, "the connection closes after the 408")

	start := time.Now()
	status, closed = slowRequest(t, u.Host, "credo_"+strings.Repeat("0", 12)+"_"+strings.Repeat("1", 64))
	require.Equal(t, http.StatusUnauthorized, status)
	require.Less(t, time.Since(start), 2*time.Second, "refused without waiting for the body")
	require.True(t, closed)
}
