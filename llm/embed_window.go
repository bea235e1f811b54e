package llm

import (
	"context"
	"math"
)

// embedSizing fits embedding inputs to the embedding model's window. A server cuts a
// longer input silently (Ollama keeps its start) or refuses it (OpenAI), so an input
// longer than the window is embedded in pieces, all in the same call, and its vector is
// their mean weighted by their length: what the whole text is about, every part of it
// counted.
type embedSizing struct {
	tokens *Tokens
	window *windowSource
}

func newEmbedSizing(cfg Config, discover func(ctx context.Context) (int, error)) *embedSizing {
	return &embedSizing{
		tokens: NewTokens(cfg.EmbedModel),
		window: &windowSource{discover: discover, setting: cfg.EmbedContext, def: DefaultEmbedContext},
	}
}

// embedBatch is a batch of inputs as sent: each input's pieces, in order.
type embedBatch struct {
	texts []string
	// pieces[i] is how many texts input i became; 1 for an input that fits.
	pieces []int
}

// split cuts every input longer than the window into pieces of at most 90% of it (a
// margin for the pieces' joins and for exact tokenizers).
func (s *embedSizing) split(ctx context.Context, inputs []string) (embedBatch, error) {
	b := embedBatch{texts: make([]string, 0, len(inputs)), pieces: make([]int, len(inputs))}
	var limit int
	for i, in := range inputs {
		// Most inputs are short statements: no window is needed for a text of fewer
		// bytes than any window has tokens.
		if len(in) < 512 {
			b.texts = append(b.texts, in)
			b.pieces[i] = 1
			continue
		}
		if limit == 0 {
			w, err := s.window.get(ctx)
			if err != nil {
				return embedBatch{}, err
			}
			limit = max(w.Tokens*9/10, 1)
		}
		parts := SplitText(in, limit, s.tokens)
		b.texts = append(b.texts, parts...)
		b.pieces[i] = len(parts)
	}
	return b, nil
}

// join turns the vectors of the batch's texts into one per input: an input's own, or
// its pieces' mean weighted by their length, scaled to unit length (cosine distance, by
// which credo compares vectors, ignores length).
func (b embedBatch) join(vecs [][]float32) [][]float32 {
	if len(vecs) == len(b.pieces) {
		return vecs
	}
	out := make([][]float32, len(b.pieces))
	at := 0
	for i, n := range b.pieces {
		if n == 1 {
			out[i] = vecs[at]
			at++
			continue
		}
		sum := make([]float64, len(vecs[at]))
		for j := at; j < at+n; j++ {
			w := float64(len(b.texts[j]))
			for d, x := range vecs[j] {
				sum[d] += w * float64(x)
			}
		}
		var norm float64
		for _, x := range sum {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		v := make([]float32, len(sum))
		for d, x := range sum {
			if norm > 0 {
				v[d] = float32(x / norm)
			}
		}
		out[i] = v
		at += n
	}
	return out
}
