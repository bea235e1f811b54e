package transcript_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/transcript"
)

// A package's own kind of invalid input is still invalid input, and what a user reads
// is the field and its problem however many errors wrap it: no wrap leaks into it.
func TestInputErrorKindAndWraps(t *testing.T) {
	t.Parallel()
	errBatch := errors.New("invalid batch")
	for _, c := range []struct {
		err       error
		kind      error
		text, msg string
	}{
		{transcript.CheckText("note", "a\x00b", 10), transcript.ErrInput, "invalid input: note contains a NUL character", "note contains a NUL character"},
		{transcript.InputErrorf(errBatch, "", "event id %d is not positive", -1), errBatch, "invalid batch: event id -1 is not positive", "event id -1 is not positive"},
		{transcript.InputErrorf(errBatch, "kind", "%q is not one of a, b", "c"), errBatch, `invalid batch: kind "c" is not one of a, b`, `kind "c" is not one of a, b`},
	} {
		require.EqualError(t, c.err, c.text)
		wrapped := fmt.Errorf("apply fact 0: %w", fmt.Errorf("in a transaction: %w", c.err))
		for _, err := range []error{c.err, wrapped} {
			require.ErrorIs(t, err, c.kind)
			require.ErrorIs(t, err, transcript.ErrInput)
			msg, ok := transcript.InputMessage(err)
			require.True(t, ok)
			require.Equal(t, c.msg, msg)
		}
	}
	_, ok := transcript.InputMessage(fmt.Errorf("x: %w", errBatch))
	require.False(t, ok, "a plain error is not input refused")
}
