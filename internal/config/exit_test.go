package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExitCode(t *testing.T) {
	t.Parallel()
	errMissing := errors.New("no such thing")
	for _, tc := range []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"none", nil, 0, ""},
		{"help", fmt.Errorf("parse: %w", flag.ErrHelp), 0, ""},
		{"usage", Usagef("--scope is required"), ExitUsage, "cmd: --scope is required\n"},
		{"usage printed", &UsageError{Err: errors.New("no file given"), Printed: true}, ExitUsage, ""},
		{"not found", fmt.Errorf("belief 7: %w", errMissing), ExitNotFound, "cmd: belief 7: no such thing\n"},
		{"failed", errors.New("boom"), ExitFailed, "cmd: boom\n"},
		{"interrupted", fmt.Errorf("%w by SIGINT: 3 episodes left", ErrInterrupted), ExitInterrupted, "cmd: interrupted by SIGINT: 3 episodes left\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			require.Equal(t, tc.code, ExitCode("cmd", tc.err, &stderr, errMissing))
			require.Equal(t, tc.stderr, stderr.String())
		})
	}
	var stderr bytes.Buffer
	require.Equal(t, ExitFailed, ExitCode("cmd", errMissing, &stderr), "not found only when asked for")
}
