package llmtest

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
)

// anchorWeight is how much an anchor's vector counts relative to the word's
// own: large enough that anchored words land close to each other (cosine
// ~0.99) and to texts about the anchor itself.
const anchorWeight = 12

var wordRE = regexp.MustCompile(`[a-z0-9]+`)

// Embed is a deterministic bag-of-words embedding: each lowercase word
// ([a-z0-9]+) maps to a fixed pseudo-random normal vector seeded by its
// SHA-256, the text's vector is their sum, L2-normalized. Texts sharing words
// are close in cosine similarity; texts sharing none are nearly orthogonal
// (|cos| ~ 1/sqrt(dim)). A text without words embeds like the empty word, so
// the result is never the zero vector.
func Embed(text string, dim int) []float32 {
	return EmbedAnchored(text, dim, nil)
}

// EmbedAnchored is Embed where each word listed in anchors also adds its
// anchor's vector with weight 12, making synonyms close: with
// {"miami": "florida"}, "Miami" and "Florida" have cosine ~0.99, and "User
// lives in Miami" and "User lives in Florida" ~0.99. Anchors count as
// anchored to themselves. Keys and values are matched lowercase.
func EmbedAnchored(text string, dim int, anchors map[string]string) []float32 {
	return embedAnchored(text, dim, lowerAnchors(anchors))
}

// embedAnchored is EmbedAnchored with anchors already through lowerAnchors.
func embedAnchored(text string, dim int, anchorOf map[string]string) []float32 {
	if dim <= 0 {
		return nil
	}
	words := wordRE.FindAllString(strings.ToLower(text), -1)
	if len(words) == 0 {
		words = []string{""}
	}
	sum := make([]float64, dim)
	for _, w := range words {
		addWordVector(sum, w, 1)
		if a, ok := anchorOf[w]; ok {
			addWordVector(sum, a, anchorWeight)
		}
	}
	var norm float64
	for _, x := range sum {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dim)
	for i, x := range sum {
		out[i] = float32(x / norm)
	}
	return out
}

// lowerAnchors lowercases anchors and maps every anchor to itself, so that
// "Florida" weighs its anchor as heavily as "Miami" does and sentences
// differing only by synonyms stay close.
func lowerAnchors(anchors map[string]string) map[string]string {
	if len(anchors) == 0 {
		return nil
	}
	out := make(map[string]string, 2*len(anchors))
	for w, a := range anchors {
		a = strings.ToLower(a)
		out[strings.ToLower(w)] = a
		out[a] = a
	}
	return out
}

func addWordVector(dst []float64, word string, weight float64) {
	seed := sha256.Sum256([]byte(word))
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:16])))
	for i := range dst {
		dst[i] += weight * rng.NormFloat64()
	}
}

// Cosine is the cosine similarity of two equal-length vectors, for tests
// asserting on Embed's geometry.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// digitWordRE is a word holding a digit, as wordRE reads words.
var digitWordRE = regexp.MustCompile(`[a-z0-9]*[0-9][a-z0-9]*`)

// EmbedBlindToCodes is Embed of text without its words that hold a digit: a dense model
// that blurs order numbers, codes and versions, as dense embeddings often do, so that
// "order KX-5521" and "order KX-1203" embed alike.
func EmbedBlindToCodes(text string, dim int) []float32 {
	return Embed(digitWordRE.ReplaceAllString(strings.ToLower(text), " "), dim)
}
