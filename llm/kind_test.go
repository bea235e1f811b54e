package llm

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKind(t *testing.T) {
	t.Parallel()
	secret := "zanzibar-7731"
	for err, want := range map[error]string{
		fmt.Errorf("%w: valid_from %q is not a date", ErrMalformedOutput, secret): "malformed model output",
		fmt.Errorf("x: %w", ErrTruncated):                                         "truncated model output",
		&StatusError{StatusCode: 401, Message: secret}:                            "the model server refused the request (status 401)",
		&StatusError{StatusCode: 503, Message: secret}:                            "the model server answered status 503",
		fmt.Errorf("chat: %w", context.DeadlineExceeded):                          "timeout",
		errors.New("insert belief: " + secret):                                    "",
	} {
		require.Equal(t, want, Kind(err), err.Error())
		require.NotContains(t, LogKind(err, "other"), secret)
	}
	require.Equal(t, "other", LogKind(errors.New(secret), "other"))
}
