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
//	beliefs webhooks update --id ID [--url URL] [--events T,...] [--json]
//	beliefs webhooks enable --id ID
//	beliefs webhooks log --id ID [--state S] [--limit N] [--json]
//	beliefs webhooks resend --id ID (--message msg_N | --all)

func webhooksCommands() []command {
	return []command{webhooksCreateCommand(), webhooksListCommand(), webhooksDeleteCommand(), webhooksTestCommand(), webhooksRotateCommand(),
		webhooksUpdateCommand(), webhooksEnableCommand(), webhooksLogCommand(), webhooksResendCommand()}
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
	if errors.Is(err, webhook.ErrURL) || errors.Is(err, webhook.ErrInvalid) || errors.Is(err, webhook.ErrDisabled) {
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
				kinds := eventKinds(*events)
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

// eventKinds are the kinds of --events, joined by commas.
func eventKinds(events string) []memory.ChangeKind {
	kinds := []memory.ChangeKind{}
	for k := range strings.SplitSeq(events, ",") {
		if k = strings.TrimSpace(k); k != "" {
			kinds = append(kinds, memory.ChangeKind(k))
		}
	}
	return kinds
}

func webhooksUpdateCommand() command {
	return command{name: "webhooks update", usage: "change a webhook's URL or events; its secret and prefix stay", groups: config.GroupDB | config.GroupWebhooks,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "webhook id (required)")
			url := fs.String("url", "", "the new URL, checked as at creation")
			events := fs.String("events", "", "the new types to deliver, joined by commas (\"all\": every type): "+kindList())
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				var p webhook.UpdateParams
				fs.Visit(func(f *flag.Flag) {
					switch f.Name {
					case "url":
						p.URL = url
					case "events":
						kinds := eventKinds(*events)
						if *events == "all" {
							kinds = []memory.ChangeKind{}
						}
						p.Events = &kinds
					}
				})
				if p.URL == nil && p.Events == nil {
					return config.Usagef("give --url or --events")
				}
				hooks, n, err := e.webhookOf(ctx, *id)
				if err != nil {
					return err
				}
				w, err := hooks.Update(ctx, n, p)
				if err != nil {
					return webhookInput(err)
				}
				if *asJSON {
					return printJSON(e.stdout, api.WebhookOf(w))
				}
				events := "every type"
				if len(w.Events) > 0 {
					events = fmt.Sprint(w.Events)
				}
				fmt.Fprintf(e.stdout, "webhook %d posts %s of %s to %s\n", n, events, prefixName(w.ScopePrefix), w.URL)
				return nil
			}
		}}
}

func webhooksEnableCommand() command {
	return command{name: "webhooks enable", usage: "re-enable a disabled webhook (resend sends again what it missed)", groups: config.GroupDB | config.GroupWebhooks,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "webhook id (required)")
			return func(ctx context.Context, e *env) error {
				hooks, n, err := e.webhookOf(ctx, *id)
				if err != nil {
					return err
				}
				w, err := hooks.Enable(ctx, n)
				if err != nil {
					return webhookInput(err)
				}
				fmt.Fprintf(e.stdout, "webhook %d enabled; given up or dropped: %d (webhooks resend --id %d --all)\n", n, w.Status.Failed+dropped(ctx, hooks, n), n)
				return nil
			}
		}}
}

// dropped counts webhook id's deliveries dropped, which resend sends again; 0 when it
// cannot read them (the count is advice).
func dropped(ctx context.Context, hooks *webhook.Webhooks, id int64) int {
	ds, err := hooks.Deliveries(ctx, id, webhook.DeliveriesParams{State: "dropped", Limit: webhook.MaxDeliveries})
	if err != nil {
		return 0
	}
	return len(ds)
}

func webhooksLogCommand() command {
	return command{name: "webhooks log", usage: "a webhook's deliveries and their attempts (time, status, error), newest first", groups: config.GroupDB | config.GroupWebhooks,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "webhook id (required)")
			state := fs.String("state", "", "only deliveries pending, delivered, failed or dropped")
			limit := fs.Int("limit", webhook.DefaultDeliveries, "at most this many deliveries")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				if *limit < 1 || *limit > webhook.MaxDeliveries {
					return config.Usagef("--limit must be between 1 and %d", webhook.MaxDeliveries)
				}
				hooks, n, err := e.webhookOf(ctx, *id)
				if err != nil {
					return err
				}
				ds, err := hooks.Deliveries(ctx, n, webhook.DeliveriesParams{State: *state, Limit: *limit})
				if err != nil {
					return webhookInput(err)
				}
				out := make([]api.WebhookDelivery, len(ds))
				for i, d := range ds {
					out[i] = api.DeliveryOf(d)
				}
				if *asJSON {
					return printJSON(e.stdout, out)
				}
				tw := table(e.stdout, "MESSAGE", "SCOPE", "POSITION", "TYPE", "STATE", "ATTEMPT", "AT", "STATUS", "ERROR")
				for _, d := range out {
					msg := d.MessageID
					if msg == "" {
						msg = "-"
					}
					if len(d.Attempts) == 0 {
						fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t-\t-\t-\t-\n", msg, d.Scope, d.Position, d.Type, d.State)
					}
					for i, a := range d.Attempts {
						status := "-"
						if a.Status != nil {
							status = strconv.Itoa(*a.Status)
						}
						fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%s\t%s\t%s\n", msg, d.Scope, d.Position, d.Type, d.State, i+1,
							a.At.Format(time.DateTime), status, clip(deref(a.Error, "-")))
					}
				}
				return tw.Flush()
			}
		}}
}

func webhooksResendCommand() command {
	return command{name: "webhooks resend", usage: "send again deliveries given up or dropped, under their message ids", groups: config.GroupDB | config.GroupWebhooks,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			id := fs.String("id", "", "webhook id (required)")
			message := fs.String("message", "", "one delivery's message id (msg_12), as webhooks log shows it")
			all := fs.Bool("all", false, "every delivery given up or dropped")
			return func(ctx context.Context, e *env) error {
				if (*message == "") == !*all {
					return config.Usagef("give --message or --all")
				}
				hooks, n, err := e.webhookOf(ctx, *id)
				if err != nil {
					return err
				}
				sent, err := hooks.Resend(ctx, n, webhook.ResendParams{MessageID: *message, All: *all})
				if err != nil {
					return webhookInput(err)
				}
				fmt.Fprintf(e.stdout, "webhook %d: %d deliveries queued again\n", n, sent)
				return nil
			}
		}}
}
