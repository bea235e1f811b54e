package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Error codes: every error the API answers carries one of these, stable across
// versions, with a human-readable message that may change.
const (
	CodeInvalidRequest   = "invalid_request"        // 400: a parameter or the body is malformed or invalid
	CodeUnauthorized     = "unauthorized"           // 401: no API key, or not a valid, unrevoked one
	CodeForbidden        = "forbidden"              // 403: the key lacks the right, or the scope is outside its prefixes
	CodeNotFound         = "not_found"              // 404: no such belief, episode or scope visible to the key
	CodeNoRoute          = "no_route"               // 404: no such endpoint
	CodeMethodNotAllowed = "method_not_allowed"     // 405
	CodeRequestTimeout   = "request_timeout"        // 408: the body was not sent in time
	CodeRefused          = "refused"                // 409: the revision engine refused an operator's revision
	CodeBodyTooLarge     = "body_too_large"         // 413: the body is over API_MAX_BODY_BYTES
	CodeTooManyRecords   = "too_many_records"       // 413: more transcripts than API_MAX_RECORDS
	CodeUnsupportedMedia = "unsupported_media_type" // 415
	CodeRateLimited      = "rate_limited"           // 429: over the key's rate; see Retry-After
	CodeInternal         = "internal"               // 500
	CodeEmbeddingFailed  = "embedding_failed"       // 502: the embedding model did not answer
	CodeModelFailed      = "model_failed"           // 502: the chat model did not answer, or not validly
	CodeAPIDisabled      = "api_disabled"           // 503: no API key exists and nothing else guards the address
)

// maxDetails bounds the problems listed in one error.
const maxDetails = 100

// Error is the one shape of every error answer:
//
//	{"error": {"code": "forbidden", "message": "...", "details": ["..."]}}
type Error struct {
	status  int
	headers http.Header
	Body    ErrorBody `json:"error"`
}

// ErrorBody is what an error says.
type ErrorBody struct {
	Code    string   `json:"code" enum:"invalid_request,unauthorized,forbidden,not_found,no_route,method_not_allowed,request_timeout,refused,body_too_large,too_many_records,unsupported_media_type,rate_limited,internal,embedding_failed,model_failed,api_disabled" doc:"Stable error code; branch on it, not on the message."`
	Message string   `json:"message" doc:"What went wrong, for people."`
	Details []string `json:"details,omitempty" nullable:"false" doc:"Each problem found, when there are several (e.g. one per invalid transcript field)."`
}

func (e *Error) Error() string { return e.Body.Code + ": " + e.Body.Message }

// GetStatus is the HTTP status of the error, for huma.
func (e *Error) GetStatus() int { return e.status }

// GetHeaders are headers sent with the error, for huma.
func (e *Error) GetHeaders() http.Header { return e.headers }

// Status is the HTTP status of the error.
func (e *Error) Status() int { return e.status }

// Code is the error's stable code.
func (e *Error) Code() string { return e.Body.Code }

func newError(status int, code, message string, details ...string) *Error {
	if len(details) > maxDetails {
		details = append(details[:maxDetails:maxDetails], strconv.Itoa(len(details)-maxDetails)+" more")
	}
	return &Error{status: status, Body: ErrorBody{Code: code, Message: message, Details: details}}
}

func invalid(message string, details ...string) *Error {
	return newError(http.StatusBadRequest, CodeInvalidRequest, message, details...)
}

// Fixed messages: what they say must not depend on what exists.
const (
	msgForbiddenScope = "this API key may not access this scope"
	msgInternal       = "internal error; the server log has the details"
)

func forbiddenScope() *Error { return newError(http.StatusForbidden, CodeForbidden, msgForbiddenScope) }

func forbiddenRight(r Right) *Error {
	return newError(http.StatusForbidden, CodeForbidden, "this API key lacks the "+string(r)+" right")
}

// notFound is the answer for an id the key can't see, whether it exists in another scope
// or not at all: the two are indistinguishable.
func notFound(what string, id int64) *Error {
	return newError(http.StatusNotFound, CodeNotFound, what+" "+strconv.FormatInt(id, 10)+" not found")
}

func internalError() *Error {
	return newError(http.StatusInternalServerError, CodeInternal, msgInternal)
}

// humaError turns huma's own errors (bad parameters, unreadable bodies) into Errors. It
// replaces huma.NewError, so that every answer has one shape. Values are never echoed.
func humaError(status int, msg string, errs ...error) huma.StatusError {
	var details []string
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d string
		if ed, ok := err.(huma.ErrorDetailer); ok {
			det := ed.ErrorDetail()
			d = det.Message
			if det.Location != "" {
				d = det.Location + ": " + det.Message
			}
		} else {
			d = err.Error()
		}
		details = append(details, d)
	}
	message := msg
	if len(details) > 0 {
		message = details[0]
		if len(details) > 1 {
			message += " (and " + strconv.Itoa(len(details)-1) + " more problems)"
		}
	}
	switch status {
	case 0: // huma's example error, for the schema
		return newError(status, CodeInternal, "")
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		if message == "" {
			message = "invalid request"
		}
		return invalid(message, details...)
	case http.StatusRequestEntityTooLarge:
		return newError(status, CodeBodyTooLarge, "request body is too large")
	case http.StatusUnsupportedMediaType:
		return newError(status, CodeUnsupportedMedia, message)
	case http.StatusRequestTimeout:
		return newError(status, CodeRequestTimeout, "request body was not sent in time")
	case http.StatusNotFound:
		return newError(status, CodeNotFound, message)
	case http.StatusMethodNotAllowed:
		return newError(status, CodeMethodNotAllowed, message)
	}
	if status >= 500 {
		return internalError()
	}
	return newError(status, strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_"), message)
}

// huma's error constructor is a package variable of huma's: set once, before any
// operation can answer.
func init() { //nolint:gochecknoinits // as said above
	huma.NewError = humaError
}

// writeError writes e as JSON; it is how answers outside huma's operations (the
// authentication and limit middleware, unknown routes) keep the one shape.
func writeError(w http.ResponseWriter, e *Error) {
	for k, vs := range e.headers {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(e) //nolint:errchkjson // the status is sent: a failed write has no one left to tell
}
