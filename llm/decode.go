package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DecodeAnswer decodes a model's structured answer into v strictly: at most maxBytes,
// exactly one JSON object, nothing after it, and only the schema's members spelled
// exactly as the schema spells them. encoding/json would take "Statement" for
// "statement" and keep the last of a name given twice; the API's bodies are decoded
// with the same policy (api/strict_json.go). Every problem wraps ErrMalformedOutput,
// so the model is asked again.
func DecodeAnswer(content string, maxBytes int, schema string, v any) error {
	if len(content) > maxBytes {
		return fmt.Errorf("%w: answer is %d bytes; the limit is %d", ErrMalformedOutput, len(content), maxBytes)
	}
	// The first value is read on its own, so that text after it gets an error of its
	// own: the retry's prompt says what was wrong. The value is copied out of the
	// decoder's buffer, which the next read reuses.
	// The decoder's errors are told, not wrapped (%v): a truncated answer's
	// io.ErrUnexpectedEOF must not read as a dropped connection (see IsRetryable).
	dec := jsontext.NewDecoder(strings.NewReader(content))
	value, err := dec.ReadValue()
	if err != nil {
		return fmt.Errorf("%w: not the %s schema: %v", ErrMalformedOutput, schema, err) //nolint:errorlint // told, not wrapped
	}
	value = bytes.Clone(value)
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: text after the JSON object", ErrMalformedOutput)
	}
	if err := jsonv2.Unmarshal(value, v, jsonv2.RejectUnknownMembers(true)); err != nil {
		return fmt.Errorf("%w: not the %s schema: %v", ErrMalformedOutput, schema, err) //nolint:errorlint // told, not wrapped
	}
	return nil
}
