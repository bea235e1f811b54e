package llm

import (
	"fmt"
	"io"
	"net/http"
)

// MaxResponseBytes bounds what is read of one answer of a model server. An honest chat
// answer is kilobytes, and a batch of embeddings a few megabytes; a server gone wrong
// must not fill the worker's memory before the answer's own checks run.
const MaxResponseBytes = 32 << 20

// limitedTransport reads every response body through a size limit.
type limitedTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(withTraceContext(req))
	if err != nil {
		return nil, err
	}
	res.Body = &limitedBody{ReadCloser: res.Body, left: t.limit, limit: t.limit}
	return res, nil
}

// limitedBody fails a read past its limit instead of truncating silently: a cut JSON
// answer would otherwise parse as an error that hides why.
type limitedBody struct {
	io.ReadCloser
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the limit: the answer may end exactly here.
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("%w: the answer is over %d bytes", ErrMalformedOutput, b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
