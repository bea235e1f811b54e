package llm

import (
	"context"
	"fmt"
)

// Attempt is one call of ChatParsed, reported as it ends.
type Attempt struct {
	Response ChatResponse
	// Err is why the answer was not used: a call error or a parse error.
	Err error
	// Retrying says a malformed answer will be asked again.
	Retrying bool
}

// maxEcho bounds how much of a rejected answer is shown back to the model.
const maxEcho = 2000

// ChatParsed asks c and parses the answer with parse. A malformed answer (the provider's
// or parse's error wraps ErrMalformedOutput) is asked again at most retries times,
// showing the model its answer and why it was rejected: models often fix their own
// mistakes when told. onAttempt, when set, is told about every call, for accounting and
// logs. Any other error is returned at once, for the caller's retry policy.
func ChatParsed[T any](ctx context.Context, c Chatter, req ChatRequest, retries int, parse func(content string) (T, error), onAttempt func(Attempt)) (T, error) {
	base := len(req.Messages)
	for attempt := 0; ; attempt++ {
		resp, err := c.Chat(ctx, req)
		var out T
		if err == nil {
			out, err = parse(resp.Content)
		}
		retry := err != nil && IsMalformed(err) && attempt < retries
		if onAttempt != nil {
			onAttempt(Attempt{Response: resp, Err: err, Retrying: retry})
		}
		if err == nil {
			return out, nil
		}
		if !retry {
			var zero T
			return zero, fmt.Errorf("%s answer: %w", req.SchemaName, err)
		}
		answer := resp.Content
		if len(answer) > maxEcho {
			answer = answer[:maxEcho] + "…"
		}
		req.Messages = append(req.Messages[:base:base],
			Message{Role: RoleAssistant, Content: answer},
			Message{Role: RoleUser, Content: "That answer was rejected: " + err.Error() +
				". Answer again with one JSON object that follows the " + req.SchemaName + " schema."})
	}
}
