package api

import (
	"strings"

	"github.com/credohq/credo/llm"
)

// PublicError is what a key is told of an episode's last error: the kind of failure in
// a stable message, never the model server's address or raw answer, which stay in the
// worker's log and in `beliefs episodes` for operators.
func PublicError(lastError *string) *string {
	if lastError == nil {
		return nil
	}
	e := *lastError
	msg := "the extraction failed; the worker's log has the details"
	switch {
	case strings.Contains(e, llm.ErrMalformedOutput.Error()):
		msg = "the model's answer was malformed"
	case strings.Contains(e, "JOB_TIMEOUT"):
		msg = "the extraction took longer than JOB_TIMEOUT"
	case strings.Contains(e, "the model server refused the request"):
		msg = "the model server refused the request: check the key and the models"
	case strings.Contains(e, "invalid batch"):
		msg = "the model's answer broke a rule of memory"
	case strings.HasPrefix(e, "llm: ") || strings.Contains(e, ": llm: "):
		msg = "the model server did not answer"
	}
	return &msg
}
