package llm

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/tiktoken-go/tokenizer"
)

// Tokens estimates how many tokens a model counts in a text, conservatively: the
// prompts are sized and cut into segments from its High, and never sent when they would
// not fit the model's window.
//
// A kept tokenizer counts where one fits the model family (OpenAI's o200k and cl100k);
// for every other family the count of cl100k, with every digit counted alone (Qwen,
// Gemma and Mistral split numbers into digits), times a margin per family that was
// measured never to be low against the families' real tokenizers (llm/testdata/tokens,
// docs/configuration.md "The model's window"). A server that counts more than High
// raises the margin (Observe), so a family nobody measured corrects itself after one
// call.
//
// A Tokens is safe for concurrent use.
type Tokens struct {
	family Family
	codec  tokenizer.Codec
	// margin is the factor over the base count, in thousandths so that Observe can
	// raise it atomically.
	margin atomic.Int64

	// memo holds the base counts of the paragraphs counted lately: every prompt of a
	// kind starts with the same instructions, and a prompt is counted again when it is
	// sent. Two generations: a paragraph used since the last turnover survives it.
	memoMu       sync.Mutex
	memo, memoed map[string]int
}

// Memo bounds: a text is counted by paragraphs (split after blank lines), those of
// memoMin bytes or more through the memo, which turns over at memoSize paragraphs.
const (
	memoMin  = 256
	memoSize = 256
)

// Family is a tokenizer family: what a model's name says of how it counts.
type Family struct {
	// Name is the family as docs and logs name it.
	Name string
	// Exact says the kept tokenizer is the model's own.
	Exact bool
	// Margin is the factor over the base count that was never low on the measured
	// texts (1 for an exact tokenizer); Low the factor that was never high, for telling
	// a cut prompt from one the server counted as it should.
	Margin, Low float64
	enc         tokenizer.Encoding
}

// The families; measured margins are in llm/testdata/tokens and docs/configuration.md.
var (
	FamilyO200k   = Family{Name: "o200k", Exact: true, Margin: 1, Low: 0.9, enc: tokenizer.O200kBase}
	FamilyCl100k  = Family{Name: "cl100k", Exact: true, Margin: 1, Low: 0.9, enc: tokenizer.Cl100kBase}
	FamilyQwen    = Family{Name: "qwen", Margin: 1.10, Low: 0.45, enc: tokenizer.Cl100kBase}
	FamilyLlama3  = Family{Name: "llama3", Margin: 1.10, Low: 0.35, enc: tokenizer.Cl100kBase}
	FamilyGemma   = Family{Name: "gemma", Margin: 1.30, Low: 0.3, enc: tokenizer.Cl100kBase}
	FamilyDefault = Family{Name: "other", Margin: 1.60, Low: 0.3, enc: tokenizer.Cl100kBase}
)

// familyPrefixes maps the start of a model's name (lower case, after any registry path
// and "ft:") to its family; the first match wins.
var familyPrefixes = []struct {
	prefix string
	family Family
}{
	{"gpt-4o", FamilyO200k}, {"chatgpt-4o", FamilyO200k}, {"gpt-4.1", FamilyO200k}, {"gpt-4.5", FamilyO200k},
	{"gpt-5", FamilyO200k}, {"o1", FamilyO200k}, {"o3", FamilyO200k}, {"o4", FamilyO200k}, {"gpt-oss", FamilyO200k},
	{"gpt-4", FamilyCl100k}, {"gpt-3.5", FamilyCl100k}, {"gpt-35", FamilyCl100k},
	{"text-embedding-3", FamilyCl100k}, {"text-embedding-ada", FamilyCl100k},
	{"qwen2", FamilyQwen}, {"qwen3", FamilyQwen}, {"qwq", FamilyQwen},
	{"llama3", FamilyLlama3}, {"llama-3", FamilyLlama3}, {"meta-llama-3", FamilyLlama3},
	{"gemma", FamilyGemma},
}

// FamilyOf is the tokenizer family of a model name ("qwen2.5:7b", "gpt-4o-mini",
// "Qwen/Qwen2.5-7B-Instruct"); FamilyDefault when the name says nothing known.
func FamilyOf(model string) Family {
	name := strings.ToLower(strings.TrimPrefix(model, "ft:"))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for _, p := range familyPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.family
		}
	}
	return FamilyDefault
}

// The kept tokenizers are immutable once built; building one reads its whole
// vocabulary (10 ms, 3 MB), so each is built once per process, when first asked.
var (
	o200k  = sync.OnceValue(func() tokenizer.Codec { return mustCodec(tokenizer.O200kBase) })
	cl100k = sync.OnceValue(func() tokenizer.Codec { return mustCodec(tokenizer.Cl100kBase) })
)

func mustCodec(enc tokenizer.Encoding) tokenizer.Codec {
	c, err := tokenizer.Get(enc)
	if err != nil {
		panic("llm: kept tokenizer " + string(enc) + " missing: " + err.Error()) // a build defect, caught by tests
	}
	return c
}

func codecFor(enc tokenizer.Encoding) tokenizer.Codec {
	if enc == tokenizer.O200kBase {
		return o200k()
	}
	return cl100k()
}

// NewTokens returns the estimator of model's family.
func NewTokens(model string) *Tokens {
	f := FamilyOf(model)
	t := &Tokens{family: f, codec: codecFor(f.enc)}
	t.margin.Store(int64(math.Ceil(f.Margin * 1000)))
	return t
}

// Family is the family t estimates for.
func (t *Tokens) Family() Family { return t.family }

// Margin is the factor over the base count that High applies now.
func (t *Tokens) Margin() float64 { return float64(t.margin.Load()) / 1000 }

// Base is the kept tokenizer's count of text, with, for a family that is not exact,
// every digit a token of its own.
func (t *Tokens) Base(text string) int {
	if len(text) < memoMin {
		return t.base(text)
	}
	// A blank line ends a pre-token of the kept tokenizers, so the paragraphs' counts add
	// up to the text's (TestTokensNeverLow checks the sum), and the instructions every
	// prompt starts with are counted once.
	n := 0
	for para := range strings.SplitAfterSeq(text, "\n\n") {
		n += t.paragraph(para)
	}
	return n
}

// paragraph is the base count of one paragraph, through the memo when it is long.
func (t *Tokens) paragraph(p string) int {
	if len(p) < memoMin {
		return t.base(p)
	}
	t.memoMu.Lock()
	n, ok := t.memo[p]
	if !ok {
		if n, ok = t.memoed[p]; ok {
			t.remember(p, n)
		}
	}
	t.memoMu.Unlock()
	if ok {
		return n
	}
	n = t.base(p)
	t.memoMu.Lock()
	t.remember(p, n)
	t.memoMu.Unlock()
	return n
}

// remember keeps n for p in the memo's current generation; t.memoMu is held.
func (t *Tokens) remember(p string, n int) {
	if t.memo == nil || len(t.memo) >= memoSize {
		t.memoed, t.memo = t.memo, make(map[string]int, memoSize)
	}
	t.memo[p] = n
}

func (t *Tokens) base(text string) int {
	n, err := t.codec.Count(text)
	if err != nil {
		// Invalid UTF-8 cannot reach a prompt (transcripts are validated); count bytes,
		// which no byte-level tokenizer exceeds.
		return len(text)
	}
	if !t.family.Exact {
		n += digitExtra(text)
	}
	return n
}

// High is a count of text no lower than the model's own, and no higher than its bytes:
// every token of a byte-level tokenizer (and of one with byte fallback) holds a byte at
// least.
func (t *Tokens) High(text string) int {
	return min(t.scale(t.Base(text)), max(len(text), 1))
}

func (t *Tokens) scale(base int) int {
	return int(math.Ceil(float64(base) * float64(t.margin.Load()) / 1000))
}

// Observe tells t what the server counted for a prompt t estimated at estimated: a
// count above the estimate raises the margin by as much, and 10% more, so that the next
// estimate is not low again. It reports whether it raised it.
func (t *Tokens) Observe(estimated, counted int) bool {
	if estimated <= 0 || counted <= estimated {
		return false
	}
	for {
		old := t.margin.Load()
		next := int64(math.Ceil(float64(old) * float64(counted) / float64(estimated) * 1.1))
		if next <= old {
			return false
		}
		if t.margin.CompareAndSwap(old, next) {
			return true
		}
	}
}

// Per-message overhead of chat templates (role markers, separators), and of the turn
// the model answers in: Qwen's <|im_start|>role\n...<|im_end|>\n is 5 tokens, Llama 3's
// header 5 to 7; measured in docs/configuration.md.
const (
	messageOverhead = 8
	replyOverhead   = 8
)

// Messages is High of a chat request's messages, template overhead included.
func (t *Tokens) Messages(msgs []Message) int {
	n, _ := t.count(msgs)
	return n
}

// count is Messages and the messages' Base.
func (t *Tokens) count(msgs []Message) (high, base int) {
	high = replyOverhead
	for _, m := range msgs {
		b := t.Base(m.Content)
		base += b
		high += messageOverhead + min(t.scale(b), max(len(m.Content), 1))
	}
	return high, base
}

// Low is a count of text no higher than the model's own.
func (t *Tokens) Low(text string) int { return t.low(t.Base(text)) }

func (t *Tokens) low(base int) int { return int(float64(base) * t.family.Low) }

// digitExtra is how many more tokens a tokenizer that splits numbers into digits counts
// than cl100k, which groups them by three.
func digitExtra(text string) int {
	extra, run := 0, 0
	flush := func() {
		extra += run - (run+2)/3
		run = 0
	}
	for _, r := range text {
		if r >= '0' && r <= '9' || r > unicode.MaxASCII && unicode.IsDigit(r) {
			run++
			continue
		}
		flush()
	}
	flush()
	return extra
}
