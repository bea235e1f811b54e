package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/webhook"
)

// Webhooks:
//
//	beliefs webhooks create --url URL --scope-prefix P [--events T,...] [--json]
//	beliefs webhooks list [--json]
//	beliefs webhooks delete --id ID
//	beliefs webhooks test --id ID [--json]
//	beliefs webhooks rotate --id ID [--json]

func webhooksCommands() []command {
	return []command{webhooksCreateCommand(), webhooksListCommand(), webhooksDeleteCommand(), webhooksTestCommand(), webhooksRotateCommand()}
}

// webhooks opens the webhooks' store, with WEBHOOK_SECRET_KEY and the guard.
func (e *env) webhooks(ctx context.Context) (*webhook.Webhooks, error) {
	pool, err := e.openPool(ctx)
	if err != nil {
		return nil, err
	}
	return webhook.NewWebhooks(webhook.Config{Pool: pool, SecretKey: e.cfg.WebhookSecretKey,
		Guard: webhook.Guard{AllowPrivate: e.cfg.WebhookAllowPrivate}})
}

// webhookInput maps a refused URL or parameter to a usage error (exit 2).
func webhookInput(err error) error {
	if errors.Is(err, webhook.ErrURL) || errors.Is(err, webhook.ErrInvalid) {
		return config.Usage(err)
	}
	if errors.Is(err, webhook.ErrNotFound) {
		return fmt.Errorf("%w (%w)", err, memory.ErrNotFound)
	}
	return err
}

// webhookOf checks --id, then opens the webhooks' store.
func (e *env) webhookOf(ctx context.Context, id string) (*webhook.Webhooks, int64, error) {
	if id == "" {
		return nil, 0, config.Usagef("--id is required")
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return nil, 0, config.Usagef("--id %q is not a webhook id", id)
	}
	hooks, err := e.webhooks(ctx)
	return hooks, n, err
}

func webhooksCreateCommand() command {
	return command{name: "webhooks create", usage: "post the changes of a scope prefix to a URL, signed (Standard Webhooks)", groups: config.GroupDB | config.GroupWebhooks,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			url := fs.String("url", "", "where to post deliveries: https, on a public address (required)")
			prefix := fs.String("scope-prefix", "", "deliver the changes of every scope starting with P (\"*\": every scope) (required)")
			events := fs.String("events", "", "types to deliver, joined by commas (default: all): "+kindList())
			asJSON := fs.Bool("json", false, "print JSON, with id and secret")
			return func(ctx context.Context, e *env) error {
				if *url == "" {
					return config.Usagef("--url is required")
				}
				p, err := policyPrefix(fs, *prefix)
				if err != nil {
					return err
				}
				var kinds []memory.ChangeKind
				for k := range strings.SplitSeq(*events, ",") {
					if k = strings.TrimSpace(k); k != "" {
						kinds = append(kinds, memory.ChangeKind(k))
					}
				}
				hooks, err := e.webhooks(ctx)
				if err != nil {
					return err
				}
				w, secret, err := hooks.Create(ctx, webhook.CreateParams{URL: *url, ScopePrefix: p, Events: kinds, CreatedBy: "cli"})
				if err != nil {
					return webhookInput(err)
				}
				out := api.WebhookOf(w)
				out.Secret = secret
				if *asJSON {
					return printJSON(e.stdout, out)
				}
				fmt.Fprintf(e.stdout, "webhook %d posts the changes of %s to %s\nsecret (shown once; receivers verify signatures with it): %s\n",
					w.ID, prefixName(p), w.URL, secret)
				return nil
			}
		}}
}

func kindList() string {
	s := make([]string, len(memory.ChangeKinds))
	for i, k := range memory.ChangeKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func webhooksListCommand() command {
	return command{name: "webhooks list", usage: "webhooks, with their last status, failures in a row, oldest undelivered change", groups: config.GroupDB | config.GroupWebhooks,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				hooks, err := e.webhooks(ctx)
				if err != nil {
					return err
				}
				ws, err := hooks.List(ctx, func(string) bool { return true })
				if err != nil {
					return err
				}
				out := make([]api.Webhook, len(ws))
				for i, w := range ws {
					out[i] = api.WebhookOf(w)
				}
				if *asJSON {
					return printJSON(e.stdout, out)
				}
				tw := table(e.stdout, "ID", "PREFIX", "URL", "EVENTS", "LAST", "FAILURES", "PENDING", "OLDEST UNDELIVERED", "STATE")
				for _, w := range out {
					last, oldest, state, events := "-", "-", "active", "all"
					if w.LastStatus != nil {
						last = strconv.Itoa(*w.LastStatus)
					} else if w.LastError != nil {
						last = "error"
					}
					if w.OldestUndelivered != nil {
						oldest = w.OldestUndelivered.Format(time.DateTime)
					}
					if w.Disabled {
						state = "disabled: " + deref(w.DisabledReason, "")
					}
					if len(w.Events) > 0 {
						events = strings.Join(w.Events, ",")
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", w.ID, prefixName(w.ScopePrefix), clip(w.URL), events, last,
						w.FailuresInRow, w.Pending, oldest, state)
				}
				return tw.Flush()
			}
		}}
}

func webhooksDeleteCommand() command {
	return command{name: "webhooks delete", usage: "delete a webhook: nothing more is sent to it", groups: config.GroupDB | config.GroupWebhooks,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "webhook id, as webhooks list shows it (required)")
			return func(ctx context.Context, e *env) error {
				hooks, n, err := e.webhookOf(ctx, *id)
				if err != nil {
					return err
				}
				if err := hooks.Delete(ctx, n); err != nil {
					return webhookInput(err)
				}
				fmt.Fprintf(e.stdout, "webhook %d deleted\n", n)
				return nil
			}
		}}
}

func webhooksTestCommand() command {
	return command{name: "webhooks test", usage: "send a webhook a signed test message now", groups: config.GroupDB | config.GroupWebhooks,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "webhook id (required)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				hooks, n, err := e.webhookOf(ctx, *id)
				if err != nil {
					return err
				}
				got, err := hooks.Test(ctx, n, 0)
				if err != nil {
					return webhookInput(err)
				}
				out := api.WebhookTest{Status: got.Status, OK: got.Error == "", Error: got.Error}
				if *asJSON {
					if err := printJSON(e.stdout, out); err != nil {
						return err
					}
				} else if out.OK {
					fmt.Fprintf(e.stdout, "webhook %d answered %d\n", n, out.Status)
				}
				if !out.OK {
					return fmt.Errorf("webhook %d: test message failed: %s", n, out.Error)
				}
				return nil
			}
		}}
}

func webhooksRotateCommand() command {
	return command{name: "webhooks rotate", usage: "give a webhook a new secret; the old one signs beside it for a day", groups: config.GroupDB | config.GroupWebhooks,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "webhook id (required)")
			asJSON := fs.Bool("json", false, "print JSON, with the new secret")
			return func(ctx context.Context, e *env) error {
				hooks, n, err := e.webhookOf(ctx, *id)
				if err != nil {
					return err
				}
				secret, err := hooks.Rotate(ctx, n)
				if err != nil {
					return webhookInput(err)
				}
				if *asJSON {
					return printJSON(e.stdout, map[string]any{"id": n, "secret": secret})
				}
				fmt.Fprintf(e.stdout, "webhook %d: new secret (shown once; the old one still signs for a day): %s\n", n, secret)
				return nil
			}
		}}
}
