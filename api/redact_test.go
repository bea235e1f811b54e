package api

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A key reads an episode's last error as a stable message: never the model server's
// internal address, nor its raw answer.
func TestEpisodeLastErrorIsRedacted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightRead)
	for raw, want := range map[string]string{
		`llm: ollama chat: Post "http://10.0.3.7:11434/api/chat": dial tcp 10.0.3.7:11434: connect: connection refused`: "the model server did not answer",
		`extract: malformed model output: facts[0]: statement "secret plans" ...`:                                       "the model's answer was malformed",
		`the episode took longer than JOB_TIMEOUT (5m0s): context deadline exceeded`:                                    "the extraction took longer than JOB_TIMEOUT",
		`pq: something internal at 10.0.0.1`:                                                                            "the extraction failed; the worker's log has the details",
	} {
		var id int64
		err := h.p.Schema.Pool.QueryRow(context.Background(), `INSERT INTO episode (scope, messages, content_hash, occurred_at, state, attempts, last_error)
			VALUES ('tenant:a/u', '[]', md5($1), now(), 'failed', 3, $1) RETURNING id`, raw).Scan(&id)
		require.NoError(t, err)
		var ep Episode
		h.ok("GET", fmt.Sprintf("/v1/episodes/%d", id), key, nil, 200, &ep)
		require.Equal(t, want, *ep.LastError, raw)
	}
}
