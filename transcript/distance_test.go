package transcript

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"user:ana", "user:ana", 2, 0},
		{"user:anna", "user:ana", 2, 1},
		{"user:ana", "usr:anna", 2, 2},
		{"tenant:a/user:42", "tenant:b/user:24", 3, 3},
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3},                                      // over the limit: limit+1
		{"a", strings.Repeat("a", 10_000), 2, 3},                         // the lengths alone tell
		{strings.Repeat("a", 10_000), strings.Repeat("b", 10_000), 1, 2}, // stops at the first row over it
	} {
		require.Equal(t, tc.want, EditDistance(tc.a, tc.b, tc.limit), "%.20q %.20q", tc.a, tc.b)
	}
}
