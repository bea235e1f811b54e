package llm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Kind names what kind of failure err is, in words that quote no user or model text:
// what logs at info and warn say, the full error going to debug (and, for an episode,
// to its last_error, which a purge erases). "" when err is none of the model's.
func Kind(err error) string {
	code, hasCode := statusCode(err)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrTruncated):
		return "truncated model output"
	case IsMalformed(err):
		return "malformed model output"
	case IsContextLength(err):
		return "prompt longer than the model's context window"
	case hasCode && IsConfigError(err):
		return fmt.Sprintf("the model server refused the request (status %d)", code)
	case hasCode:
		return fmt.Sprintf("the model server answered status %d", code)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case IsRetryable(err):
		return "the model server did not answer"
	}
	return ""
}

// LogKind is Kind, or other when err is not the model's (the database's, a rule of
// memory): a log line at info or warn names the kind, never the text.
func LogKind(err error, other string) string {
	if k := Kind(err); k != "" {
		return k
	}
	return other
}

// Code is Kind as a low-cardinality code, for a span's error.type: the HTTP status a
// model server answered ("503"), or truncated_output, malformed_output,
// context_length_exceeded, canceled, timeout, unavailable. "" when err is none of the
// model's.
func Code(err error) string {
	code, hasCode := statusCode(err)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrTruncated):
		return "truncated_output"
	case IsMalformed(err):
		return "malformed_output"
	case IsContextLength(err):
		return "context_length_exceeded"
	case hasCode:
		return strconv.Itoa(code)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case IsRetryable(err):
		return "unavailable"
	}
	return ""
}
