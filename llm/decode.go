package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DecodeAnswer decodes a model's structured answer into v strictly: at most maxBytes,
// one JSON object of the schema's fields and nothing after it. Every problem wraps
// ErrMalformedOutput, so the model is asked again.
func DecodeAnswer(content string, maxBytes int, schema string, v any) error {
	if len(content) > maxBytes {
		return fmt.Errorf("%w: answer is %d bytes; the limit is %d", ErrMalformedOutput, len(content), maxBytes)
	}
	dec := json.NewDecoder(strings.NewReader(content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: not the %s schema: %v", ErrMalformedOutput, schema, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: text after the JSON object", ErrMalformedOutput)
	}
	return nil
}
