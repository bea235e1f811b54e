package metrics

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/redact"
)

// Redactions are counted by kind and where: a transcript's once its episode is done, a
// fact's as it is applied; a policy's patterns are one kind, whatever their names.
func TestExtractedCountsRedactions(t *testing.T) {
	t.Parallel()
	m := New()
	m.Extracted(extract.Report{EpisodeID: 1, TranscriptRedacted: map[string]int{"card": 2, "api_key": 1, "pattern:employee_id": 3},
		Redacted: redact.Counts{"card": 1}})
	m.Extracted(extract.Report{EpisodeID: 2, TranscriptRedacted: map[string]int{"card": 1, "pattern:ticket": 1}})
	s := scrapeOf(t, m)
	require.Equal(t, 3.0, s.value("credo_redactions_total", "kind=card", "where=transcript"))
	require.Equal(t, 1.0, s.value("credo_redactions_total", "kind=api_key", "where=transcript"))
	require.Equal(t, 4.0, s.value("credo_redactions_total", "kind=pattern", "where=transcript"))
	require.Equal(t, 1.0, s.value("credo_redactions_total", "kind=card", "where=fact"))
	require.Equal(t, 9.0, s.value("credo_redactions_total"))
}
