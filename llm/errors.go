package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"

	ollama "github.com/ollama/ollama/api"
	openai "github.com/sashabaranov/go-openai"
)

// ErrMalformedOutput marks an answer that arrived intact over the wire but
// can't be used: truncated, empty, not JSON despite a schema, or a batch of
// vectors that doesn't match its inputs. It is not IsRetryable: at
// temperature 0 the same request tends to produce the same output, so
// whether to retry (perhaps with a larger budget or a nudge) is the
// caller's call.
var ErrMalformedOutput = errors.New("malformed model output")

// ErrTruncated is the ErrMalformedOutput for an answer cut off by the token
// limit (finish_reason "length", or no choices at all).
var ErrTruncated = fmt.Errorf("output truncated: %w", ErrMalformedOutput)

// StatusError is an HTTP error answer from a model server, whichever client
// library produced it. Err is the library's own error.
type StatusError struct {
	Provider   string
	StatusCode int
	Message    string
	Err        error
}

// Error omits Provider: providers always wrap it as "llm: <provider> <op>: ".
func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d", e.StatusCode)
	}
	return fmt.Sprintf("HTTP %d: %s", e.StatusCode, e.Message)
}

func (e *StatusError) Unwrap() error { return e.Err }

// Retryable reports whether the status is worth retrying: throttling, a
// request timeout, or a server-side failure (model loading, OOM, restarts).
func (e *StatusError) Retryable() bool { return retryableStatus(e.StatusCode) }

func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500 && code <= 599
}

// IsConfigError reports whether the server refused the request for what waiting does not
// fix: a key it refuses (401, 403) or a model or path it does not know (404).
func IsConfigError(err error) bool {
	code, ok := statusCode(err)
	return ok && (code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusNotFound)
}

// IsRefused reports whether the model server refused the request for what retrying does
// not change: an answer 4xx but 408 (timeout) and 429 (throttled). A key, a model, a
// path, a request it will not take.
func IsRefused(err error) bool {
	code, ok := statusCode(err)
	return ok && code >= 400 && code < 500 && !retryableStatus(code)
}

// Malformedf returns an ErrMalformedOutput saying what breaks the schema, for a caller
// that validates an answer DecodeAnswer decoded: the model may do better if asked again.
func Malformedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedOutput, fmt.Sprintf(format, args...))
}

// IsMalformed reports whether err is (or wraps) ErrMalformedOutput.
func IsMalformed(err error) bool { return errors.Is(err, ErrMalformedOutput) }

// IsRetryable reports whether err is transient: HTTP 408, 429 or 5xx, an HTTP
// call that timed out, a refused, reset or prematurely closed connection.
// Cancellation of the caller's context is not retryable; neither are other
// 4xx statuses nor ErrMalformedOutput.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if code, ok := statusCode(err); ok {
		return retryableStatus(code)
	}
	if errors.Is(err, ErrMalformedOutput) {
		return false
	}
	// http.Client.Timeout errors wrap DeadlineExceeded and are net.Errors
	// with Timeout() true; either is enough.
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if netErr, ok := errors.AsType[net.Error](err); ok && netErr.Timeout() {
		return true
	}
	for _, target := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// statusCode extracts an HTTP status from our StatusError or, for errors that
// didn't pass through a provider, from the client libraries' own types.
func statusCode(err error) (int, bool) {
	if e, ok := errors.AsType[*StatusError](err); ok {
		return e.StatusCode, true
	}
	if e, ok := errors.AsType[*openai.APIError](err); ok && e.HTTPStatusCode != 0 {
		return e.HTTPStatusCode, true
	}
	if e, ok := errors.AsType[*openai.RequestError](err); ok && e.HTTPStatusCode != 0 {
		return e.HTTPStatusCode, true
	}
	if e, ok := errors.AsType[ollama.StatusError](err); ok && e.StatusCode != 0 {
		return e.StatusCode, true
	}
	if e, ok := errors.AsType[ollama.AuthorizationError](err); ok && e.StatusCode != 0 {
		return e.StatusCode, true
	}
	return 0, false
}

// wrapErr converts client library HTTP errors into *StatusError and prefixes
// the operation. If the caller's ctx is done, its error is kept in the chain
// so IsRetryable sees context.Canceled even when the transport reported
// something vaguer.
func wrapErr(ctx context.Context, provider, op string, err error) error {
	if se := toStatusError(provider, err); se != nil {
		err = se
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("llm: %s %s: %w (%w)", provider, op, err, ctxErr)
	}
	return fmt.Errorf("llm: %s %s: %w", provider, op, err)
}

func toStatusError(provider string, err error) *StatusError {
	if e, ok := errors.AsType[*openai.APIError](err); ok && e.HTTPStatusCode != 0 {
		return &StatusError{Provider: provider, StatusCode: e.HTTPStatusCode, Message: e.Message, Err: err}
	}
	if e, ok := errors.AsType[*openai.RequestError](err); ok && e.HTTPStatusCode != 0 {
		// Body is whatever the server sent when it wasn't OpenAI-shaped (vLLM
		// and proxies); keep it short, it may be an HTML error page.
		msg := string(e.Body)
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		return &StatusError{Provider: provider, StatusCode: e.HTTPStatusCode, Message: msg, Err: err}
	}
	if e, ok := errors.AsType[ollama.StatusError](err); ok && e.StatusCode != 0 {
		return &StatusError{Provider: provider, StatusCode: e.StatusCode, Message: e.ErrorMessage, Err: err}
	}
	if e, ok := errors.AsType[ollama.AuthorizationError](err); ok && e.StatusCode != 0 {
		return &StatusError{Provider: provider, StatusCode: e.StatusCode, Message: e.Status, Err: err}
	}
	return nil
}
