package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/recall"
)

// reader opens the agent's read side with the configured models.
func (e *env) reader(ctx context.Context) (*recall.Reader, error) {
	red, err := app.Redactor(e.cfg)
	if err != nil {
		return nil, err
	}
	store, chat, embed, err := e.openModels(ctx)
	if err != nil {
		return nil, err
	}
	return recall.New(recall.Config{Store: store, Chat: chat, Embed: embed, Logger: app.Logger(e.cfg, e.stderr), Redact: red})
}

// read asks the agent's read side; its failure says what to do (readError).
func read[T any](ctx context.Context, e *env, ask func(*recall.Reader) (T, error)) (T, error) {
	r, err := e.reader(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	got, err := ask(r)
	if err != nil {
		return got, readError(err)
	}
	return got, nil
}

// readError says what to do about a read-side failure; a bad query is bad usage.
func readError(err error) error {
	switch {
	case errors.Is(err, recall.ErrQuery):
		return config.Usage(err)
	case errors.Is(err, recall.ErrEmbedding):
		return fmt.Errorf("embed the query (is the embedding server up?): %w", err)
	}
	return err
}

func contextCommand() command {
	return command{name: "context", usage: "what memory holds for a question, as a text block for a prompt", groups: config.GroupDB | config.GroupLLM,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope to read (required)")
			query := fs.String("query", "", "the question or topic; ranks by similarity, and a question about the past adds what no longer holds")
			k := fs.Int("k", recall.DefaultK, "at most this many beliefs per section")
			budget := fs.Int("budget", recall.DefaultBudget, "at most this many characters")
			inherit := fs.Bool("inherit", false, "add the organisation's defaults from the ancestor scopes")
			asOf := fs.String("as-of", "", "what was true at this time (RFC 3339 or date)")
			asJSON := fs.Bool("json", false, `print {"context": "...", "beliefs": [...]}`)
			return func(ctx context.Context, e *env) error {
				if *k < 1 || *budget < 1 {
					return config.Usagef("--k and --budget must be at least 1")
				}
				q, err := readQuery(*scope, *query, *k, *inherit, *asOf)
				if err != nil {
					return err
				}
				q.Budget = *budget
				got, err := read(ctx, e, func(r *recall.Reader) (*recall.Context, error) { return r.Context(ctx, q) })
				if err != nil {
					return err
				}
				if err := e.knownScope(ctx, q.Scope, q.Inherit, len(got.Beliefs)); err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, got)
				}
				_, err = fmt.Fprint(e.stdout, got.Text)
				return err
			}
		}}
}

func askCommand() command {
	return command{name: "ask", usage: "answer a question from memory, citing the beliefs it rests on", groups: config.GroupDB | config.GroupLLM,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "scope to read (required)")
			question := fs.String("question", "", "the question (required)")
			inherit := fs.Bool("inherit", false, "add the organisation's defaults from the ancestor scopes")
			asJSON := fs.Bool("json", false, `print {"answer": "...", "citations": [ids], "beliefs": [...]}`)
			return func(ctx context.Context, e *env) error {
				if *question == "" {
					return config.Usagef("--question is required")
				}
				q, err := readQuery(*scope, *question, 0, *inherit, "")
				if err != nil {
					return err
				}
				got, err := read(ctx, e, func(r *recall.Reader) (*recall.Answer, error) { return r.Ask(ctx, q) })
				if err != nil {
					return err
				}
				if err := e.knownScope(ctx, q.Scope, q.Inherit, len(got.Beliefs)); err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, got)
				}
				fmt.Fprintln(e.stdout, got.Answer)
				for _, id := range got.Citations {
					for _, b := range got.Beliefs {
						if b.ID == id {
							fmt.Fprintf(e.stdout, "  [%d] %s\n", b.ID, b.Statement)
						}
					}
				}
				return nil
			}
		}}
}

func readQuery(scope, query string, k int, inherit bool, asOf string) (recall.Query, error) {
	if err := requireScope(scope); err != nil {
		return recall.Query{}, err
	}
	q := recall.Query{Scope: scope, Query: query, K: k, Inherit: inherit}
	if asOf != "" {
		t, err := parseTime("as-of", asOf)
		if err != nil {
			return q, err
		}
		q.AsOf = &t
	}
	return q, nil
}
