package extract

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transcript"
)

// RedactTx redacts transcripts before anything of them is stored or sent: each with the
// redactor of the policy in force in its scope, read in tx (memory.Policy.Redactor over
// base; nil base is redact.Default), in the content and name of every message. It
// returns the transcripts redacted, in order, and what was replaced in each, counted by
// kind (nil when nothing). Enqueue calls it; so must any other writer of episodes (an
// import), so that every path goes through the same redaction.
func RedactTx(ctx context.Context, tx pgx.Tx, base *redact.Redactor, ts []transcript.Transcript) ([]transcript.Transcript, []redact.Counts, error) {
	if base == nil {
		base = redact.Default()
	}
	scopes := make([]string, len(ts))
	for i, t := range ts {
		scopes[i] = t.Scope
	}
	policies, err := memory.PoliciesForTx(ctx, tx, scopes)
	if err != nil {
		return nil, nil, err
	}
	redactors := map[string]*redact.Redactor{}
	out := make([]transcript.Transcript, len(ts))
	counts := make([]redact.Counts, len(ts))
	for i, t := range ts {
		r, ok := redactors[t.Scope]
		if !ok {
			if r, err = policies[t.Scope].Redactor(base); err != nil {
				return nil, nil, err
			}
			redactors[t.Scope] = r
		}
		out[i], counts[i] = redactTranscript(r, t)
	}
	return out, counts, nil
}

// redactTranscript is t with the secrets of its messages' contents and names replaced,
// and what was replaced.
func redactTranscript(r *redact.Redactor, t transcript.Transcript) (transcript.Transcript, redact.Counts) {
	if r.Off() {
		return t, nil
	}
	var counts redact.Counts
	msgs := make([]transcript.Message, len(t.Messages))
	for i, m := range t.Messages {
		counts = addCounts(counts, r.Fields(&m.Content, &m.Name))
		msgs[i] = m
	}
	t.Messages = msgs
	return t, counts
}

// redactFacts replaces the secrets of what the model answered, before it is stored:
// each fact's statement, subject, attribute, quote and rationale. It returns what was
// replaced, counted by kind (nil when nothing).
func redactFacts(r *redact.Redactor, facts []memory.Fact) redact.Counts {
	if r.Off() {
		return nil
	}
	var counts redact.Counts
	for i := range facts {
		f := &facts[i]
		fields := []*string{&f.Statement, &f.Subject, &f.Attribute, &f.Quote}
		if f.Resolves != nil {
			fields = append(fields, &f.Resolves.Rationale)
		}
		counts = addCounts(counts, r.Fields(fields...))
	}
	return counts
}
