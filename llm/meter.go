package llm

import (
	"context"
	"sync/atomic"
)

// Counts are the calls made to a model server and the tokens it reported for them.
type Counts struct {
	ChatCalls            int `json:"chat_calls"`
	ChatPromptTokens     int `json:"chat_prompt_tokens"`
	ChatCompletionTokens int `json:"chat_completion_tokens"`
	EmbedCalls           int `json:"embed_calls"`
	// EmbedInputs are the texts embedded, EmbedTokens the tokens the server counted.
	EmbedInputs int `json:"embed_inputs"`
	EmbedTokens int `json:"embed_tokens"`
}

// Sub is c less o: what was counted between two snapshots.
func (c Counts) Sub(o Counts) Counts {
	return Counts{
		ChatCalls: c.ChatCalls - o.ChatCalls, ChatPromptTokens: c.ChatPromptTokens - o.ChatPromptTokens,
		ChatCompletionTokens: c.ChatCompletionTokens - o.ChatCompletionTokens, EmbedCalls: c.EmbedCalls - o.EmbedCalls,
		EmbedInputs: c.EmbedInputs - o.EmbedInputs, EmbedTokens: c.EmbedTokens - o.EmbedTokens,
	}
}

// Add is c plus o.
func (c Counts) Add(o Counts) Counts {
	return Counts{
		ChatCalls: c.ChatCalls + o.ChatCalls, ChatPromptTokens: c.ChatPromptTokens + o.ChatPromptTokens,
		ChatCompletionTokens: c.ChatCompletionTokens + o.ChatCompletionTokens, EmbedCalls: c.EmbedCalls + o.EmbedCalls,
		EmbedInputs: c.EmbedInputs + o.EmbedInputs, EmbedTokens: c.EmbedTokens + o.EmbedTokens,
	}
}

// Tally counts calls and tokens; it is safe for concurrent use. The zero value is ready.
type Tally struct {
	chatCalls, chatPrompt, chatCompletion atomic.Int64
	embedCalls, embedInputs, embedTokens  atomic.Int64
}

// Counts is what t has counted so far.
func (t *Tally) Counts() Counts {
	return Counts{
		ChatCalls: int(t.chatCalls.Load()), ChatPromptTokens: int(t.chatPrompt.Load()),
		ChatCompletionTokens: int(t.chatCompletion.Load()), EmbedCalls: int(t.embedCalls.Load()),
		EmbedInputs: int(t.embedInputs.Load()), EmbedTokens: int(t.embedTokens.Load()),
	}
}

func (t *Tally) chat(u Usage) {
	t.chatCalls.Add(1)
	t.chatPrompt.Add(int64(u.PromptTokens))
	t.chatCompletion.Add(int64(u.CompletionTokens))
}

func (t *Tally) embed(inputs int, u Usage) {
	t.embedCalls.Add(1)
	t.embedInputs.Add(int64(inputs))
	t.embedTokens.Add(int64(u.PromptTokens))
}

type tallyKey struct{}

// CountInto returns a context under which every call through a Meter is counted in t
// too, besides the meter's own total: what one question or one scope cost, while many
// run at once through the same meter.
func CountInto(ctx context.Context, t *Tally) context.Context {
	return context.WithValue(ctx, tallyKey{}, t)
}

// Meter is a Chatter and Embedder that counts every answered call of the ones it wraps,
// with the token usage the server reported (a call that failed is not counted: its
// usage is unknown). Total counts all; a context from CountInto counts its own calls
// as well.
type Meter struct {
	chat  Chatter
	embed Embedder
	total Tally
}

// NewMeter meters chat and embed; either may be nil if it is never called.
func NewMeter(chat Chatter, embed Embedder) *Meter { return &Meter{chat: chat, embed: embed} }

// Total is what every call through m has cost so far.
func (m *Meter) Total() Counts { return m.total.Counts() }

// Chat calls the wrapped Chatter and counts the call.
func (m *Meter) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	res, err := m.chat.Chat(ctx, req)
	if err == nil {
		m.total.chat(res.Usage)
		if t, ok := ctx.Value(tallyKey{}).(*Tally); ok {
			t.chat(res.Usage)
		}
	}
	return res, err
}

// Embed calls the wrapped Embedder and counts the call.
func (m *Meter) Embed(ctx context.Context, inputs []string) (EmbedResponse, error) {
	res, err := m.embed.Embed(ctx, inputs)
	if err == nil {
		m.total.embed(len(inputs), res.Usage)
		if t, ok := ctx.Value(tallyKey{}).(*Tally); ok {
			t.embed(len(inputs), res.Usage)
		}
	}
	return res, err
}
