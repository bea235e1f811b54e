package llm

import (
	"context"
	"errors"
	"fmt"
)

// ErrEmbedding is what every failure to embed texts for a reader or an operator is
// (errors.Is): the embedding model did not answer, or not with one vector per text.
// Nothing was read or changed; each surface says so in its own words.
var ErrEmbedding = errors.New("the embedding model did not answer")

// EmbedTexts embeds texts with e in one call: one vector per text, in order, or an error
// that is an *EmbeddingError.
func EmbedTexts(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	res, err := e.Embed(ctx, texts)
	if err == nil && len(res.Vectors) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(res.Vectors), len(texts))
	}
	if err != nil {
		return nil, &EmbeddingError{Err: err}
	}
	return res.Vectors, nil
}

// EmbeddingError is a failure to embed: it is ErrEmbedding, and Err is why.
type EmbeddingError struct {
	Err error
}

func (e *EmbeddingError) Error() string { return ErrEmbedding.Error() + ": " + e.Err.Error() }

// Unwrap is why.
func (e *EmbeddingError) Unwrap() error { return e.Err }

// Is reports ErrEmbedding.
func (e *EmbeddingError) Is(target error) bool { return target == ErrEmbedding }
