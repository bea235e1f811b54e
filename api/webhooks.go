package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/webhook"
)

// WebhookRequest creates a webhook.
type WebhookRequest struct {
	URL         string   `json:"url" minLength:"1" maxLength:"2000" doc:"Where deliveries are posted: https, on a host that resolves to public addresses only (unless the worker runs with WEBHOOK_ALLOW_PRIVATE=true)."`
	ScopePrefix string   `json:"scope_prefix" maxLength:"200" doc:"The changes of every scope starting with it are delivered; it must start with one of the key's scope prefixes."`
	Events      []string `json:"events,omitempty" enum:"belief.created,belief.forgotten,revision.applied,revision.reverted,review.opened,review.resolved,episode.failed,scope.purged" doc:"The types to deliver (the feed's). Absent or empty: all."`
}

// Webhook is a subscription as the API shows it; the secret only when created or
// rotated.
type Webhook struct {
	ID          int64     `json:"id"`
	URL         string    `json:"url"`
	ScopePrefix string    `json:"scope_prefix"`
	Events      []string  `json:"events" nullable:"false" enum:"belief.created,belief.forgotten,revision.applied,revision.reverted,review.opened,review.resolved,episode.failed,scope.purged" doc:"Empty: every type."`
	CreatedAt   time.Time `json:"created_at"`
	Secret      string    `json:"secret,omitempty" doc:"whsec_ and base64: the key that signs deliveries (Standard Webhooks). Shown once, when the webhook is created or its secret rotated."`
	// Status.
	Disabled          bool       `json:"disabled" doc:"Deliveries failed for WEBHOOK_DISABLE_AFTER: nothing more is sent."`
	DisabledReason    *string    `json:"disabled_reason"`
	LastStatus        *int       `json:"last_status" doc:"The HTTP status of the last attempt; null with none, or no answer (see last_error)."`
	LastError         *string    `json:"last_error"`
	LastAttemptAt     *time.Time `json:"last_attempt_at"`
	FailuresInRow     int        `json:"failures_in_row" doc:"Failed attempts of the oldest undelivered change."`
	OldestUndelivered *time.Time `json:"oldest_undelivered" doc:"When the oldest change still to deliver was made; null when none waits."`
	Pending           int        `json:"pending" doc:"Deliveries waiting."`
	Failed            int        `json:"failed" doc:"Deliveries given up after a day of retries."`
	PreviousUntil     *time.Time `json:"previous_secret_until" doc:"After a rotation, the old secret signs beside the new one until then."`
}

// Webhooks answers GET /v1/webhooks.
type Webhooks struct {
	Webhooks []Webhook `json:"webhooks" nullable:"false"`
}

// WebhookUpdate changes a webhook: an absent field stays as it is.
type WebhookUpdate struct {
	URL    *string   `json:"url,omitempty" minLength:"1" maxLength:"2000" doc:"The new URL, checked as at creation; queued deliveries go to it."`
	Events *[]string `json:"events,omitempty" doc:"The new types to deliver; empty: all."`
}

// WebhookResend says what to send again.
type WebhookResend struct {
	MessageID string `json:"message_id,omitempty" maxLength:"40" doc:"One delivery's webhook-id (msg_12), as GET /v1/webhooks/{id}/deliveries gives it."`
	All       bool   `json:"all,omitempty" doc:"Every delivery given up (failed) or dropped while the webhook was disabled. Give all or message_id."`
}

// WebhookResent answers POST /v1/webhooks/{id}/resend.
type WebhookResent struct {
	Resent int `json:"resent" doc:"Deliveries queued again, each under its message id."`
}

// WebhookAttempt is one attempt at a delivery.
type WebhookAttempt struct {
	At     time.Time `json:"at"`
	Status *int      `json:"status" doc:"The receiver's HTTP status; null without an answer (see error)."`
	Error  *string   `json:"error" doc:"Why it failed; null when the receiver answered 2xx."`
}

// WebhookDelivery is one change sent, or to send, to a webhook, with its attempts.
type WebhookDelivery struct {
	MessageID     string           `json:"message_id" doc:"Its webhook-id, the same on every attempt; empty before the first."`
	Scope         string           `json:"scope"`
	Position      int64            `json:"position" doc:"The change's position in the scope's feed."`
	Type          string           `json:"type"`
	State         string           `json:"state" enum:"pending,delivered,failed,dropped" doc:"failed: given up after a day of retries, or on 410 Gone; dropped: erased, or its webhook disabled."`
	CreatedAt     time.Time        `json:"created_at" doc:"When the change was made."`
	DoneAt        *time.Time       `json:"done_at"`
	NextAttemptAt *time.Time       `json:"next_attempt_at" doc:"When a failing delivery is tried again."`
	Attempts      []WebhookAttempt `json:"attempts" nullable:"false" doc:"Oldest first."`
}

// WebhookDeliveries answers GET /v1/webhooks/{id}/deliveries.
type WebhookDeliveries struct {
	Deliveries []WebhookDelivery `json:"deliveries" nullable:"false" doc:"Newest first; a delivery done is kept a day."`
}

// DeliveryOf is d as the API and the CLI show it.
func DeliveryOf(d webhook.Delivery) WebhookDelivery {
	out := WebhookDelivery{MessageID: d.MessageID, Scope: d.Scope, Position: d.Position, Type: string(d.Type), State: d.State,
		CreatedAt: d.CreatedAt, DoneAt: d.DoneAt, NextAttemptAt: d.NextAttemptAt, Attempts: []WebhookAttempt{}}
	for _, a := range d.Attempts {
		out.Attempts = append(out.Attempts, WebhookAttempt{At: a.At, Status: a.Status, Error: a.Error})
	}
	return out
}

// WebhookTest answers POST /v1/webhooks/{id}/test.
type WebhookTest struct {
	Status int    `json:"status" doc:"The receiver's HTTP status; 0 without an answer."`
	OK     bool   `json:"ok" doc:"The receiver answered 2xx."`
	Error  string `json:"error,omitempty"`
}

// WebhookOf is w as the API and the CLI show it.
func WebhookOf(w *webhook.Webhook) Webhook {
	out := Webhook{ID: w.ID, URL: w.URL, ScopePrefix: w.ScopePrefix, Events: []string{}, CreatedAt: w.CreatedAt,
		Disabled: w.DisabledAt != nil, DisabledReason: w.DisabledReason, LastStatus: w.Status.LastStatus, LastError: w.Status.LastError,
		LastAttemptAt: w.Status.LastAttemptAt, FailuresInRow: w.Status.FailuresInRow, OldestUndelivered: w.Status.OldestUndelivered,
		Pending: w.Status.Pending, Failed: w.Status.Failed, PreviousUntil: w.PreviousUntil}
	for _, e := range w.Events {
		out.Events = append(out.Events, string(e))
	}
	return out
}

type (
	createWebhookInput struct {
		Body WebhookRequest
	}
	webhookIDQuery struct {
		ID int64 `query:"id" required:"true" minimum:"1" doc:"Webhook id."`
	}
	webhookIDPath struct {
		ID int64 `path:"id" minimum:"1" doc:"Webhook id."`
	}
	updateWebhookInput struct {
		ID   int64 `path:"id" minimum:"1" doc:"Webhook id."`
		Body WebhookUpdate
	}
	resendWebhookInput struct {
		ID   int64 `path:"id" minimum:"1" doc:"Webhook id."`
		Body WebhookResend
	}
	webhookDeliveriesInput struct {
		ID    int64  `path:"id" minimum:"1" doc:"Webhook id."`
		State string `query:"state" enum:"pending,delivered,failed,dropped" doc:"Only the deliveries in this state."`
		Limit int    `query:"limit" minimum:"1" maximum:"1000" default:"50" doc:"At most this many, newest first."`
	}
)

func (s *Server) registerWebhooks() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "createWebhook", Method: http.MethodPost, Path: "/v1/webhooks", Tags: []string{"webhooks"},
		Summary: "Subscribe a URL to the changes of a scope prefix", DefaultStatus: http.StatusCreated,
		Description: "As `beliefs webhooks create`. The answer holds the secret, shown this once. A URL whose host resolves to a loopback, private or link-local address is refused with 400, as is http, unless the worker runs with WEBHOOK_ALLOW_PRIVATE=true. " +
			"503 when the worker has no WEBHOOK_SECRET_KEY. Needs the operate right, and a prefix within the key's.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusUnsupportedMediaType), func(ctx context.Context, in *createWebhookInput) (*output[Webhook], error) {
		return wrap(s.createWebhook(ctx, principalFrom(ctx), in.Body))
	})
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "listWebhooks", Method: http.MethodGet, Path: "/v1/webhooks", Tags: []string{"webhooks"},
		Summary:     "The webhooks within the key's prefixes, with their deliveries' status",
		Description: "As `beliefs webhooks list`: each one's last status, failures in a row, oldest undelivered change, and whether it was disabled. Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden), func(ctx context.Context, _ *struct{}) (*output[Webhooks], error) {
		return wrap(s.listWebhooks(ctx, principalFrom(ctx)))
	})
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "deleteWebhook", Method: http.MethodDelete, Path: "/v1/webhooks", Tags: []string{"webhooks"},
		Summary:     "Delete a webhook",
		Description: "As `beliefs webhooks delete`: nothing more is sent to it, its queued deliveries are dropped. Answers the webhook removed. Needs the operate right; a webhook outside the key's prefixes is not found, like an unknown id.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), func(ctx context.Context, in *webhookIDQuery) (*output[Webhook], error) {
		return wrap(s.deleteWebhook(ctx, principalFrom(ctx), in.ID))
	})
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "testWebhook", Method: http.MethodPost, Path: "/v1/webhooks/{id}/test", Tags: []string{"webhooks"},
		Summary:     "Send a signed test message to a webhook now",
		Description: "As `beliefs webhooks test`: a message of type webhook.test, signed and guarded as deliveries are, and the receiver's answer. Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), func(ctx context.Context, in *webhookIDPath) (*output[WebhookTest], error) {
		return wrap(s.testWebhook(ctx, principalFrom(ctx), in.ID))
	})
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "rotateWebhookSecret", Method: http.MethodPost, Path: "/v1/webhooks/{id}/rotate", Tags: []string{"webhooks"},
		Summary:     "Give a webhook a new secret",
		Description: "The answer holds the new secret, shown this once; the old one still signs beside it for a day (two signatures in webhook-signature). Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), func(ctx context.Context, in *webhookIDPath) (*output[Webhook], error) {
		return wrap(s.rotateWebhook(ctx, principalFrom(ctx), in.ID))
	})
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "updateWebhook", Method: http.MethodPatch, Path: "/v1/webhooks/{id}", Tags: []string{"webhooks"},
		Summary:     "Change a webhook's URL or events",
		Description: "As `beliefs webhooks update`: the URL is checked as at creation; deliveries still queued go to the new one. The secret and the scope prefix stay. Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnsupportedMediaType), func(ctx context.Context, in *updateWebhookInput) (*output[Webhook], error) {
		return wrap(s.updateWebhook(ctx, principalFrom(ctx), in.ID, in.Body))
	})
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "enableWebhook", Method: http.MethodPost, Path: "/v1/webhooks/{id}/enable", Tags: []string{"webhooks"},
		Summary:     "Re-enable a disabled webhook",
		Description: "As `beliefs webhooks enable`: changes from now on are delivered again; what was given up or dropped meanwhile is sent again by resend. Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), func(ctx context.Context, in *webhookIDPath) (*output[Webhook], error) {
		return wrap(s.enableWebhook(ctx, principalFrom(ctx), in.ID))
	})
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "resendWebhook", Method: http.MethodPost, Path: "/v1/webhooks/{id}/resend", Tags: []string{"webhooks"},
		Summary:     "Send again deliveries given up or dropped",
		Description: "As `beliefs webhooks resend`: one delivery by its message id, or all those given up (failed) or dropped, each under its message id, with a new day of retries. 400 while the webhook is disabled. Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnsupportedMediaType), func(ctx context.Context, in *resendWebhookInput) (*output[WebhookResent], error) {
		return wrap(s.resendWebhook(ctx, principalFrom(ctx), in.ID, in.Body))
	})
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "listWebhookDeliveries", Method: http.MethodGet, Path: "/v1/webhooks/{id}/deliveries", Tags: []string{"webhooks"},
		Summary:     "A webhook's log: its deliveries and their attempts",
		Description: "As `beliefs webhooks log`: newest first, each with its message id, scope, position, state and every attempt (time, status, error). A delivery done is kept a day. Needs the operate right.",
	}, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound), func(ctx context.Context, in *webhookDeliveriesInput) (*output[WebhookDeliveries], error) {
		return wrap(s.webhookDeliveries(ctx, principalFrom(ctx), in))
	})
}

// webhookError maps the webhook package's errors.
func (s *Server) webhookError(ctx context.Context, id int64, err error) error {
	switch {
	case errors.Is(err, webhook.ErrNotFound):
		return notFound("webhook", id)
	case errors.Is(err, webhook.ErrURL), errors.Is(err, webhook.ErrInvalid), errors.Is(err, webhook.ErrDisabled):
		return invalid(err.Error())
	case errors.Is(err, webhook.ErrNoSecretKey):
		return newError(http.StatusServiceUnavailable, CodeAPIDisabled, err.Error())
	}
	return s.internal(ctx, err)
}

func (s *Server) createWebhook(ctx context.Context, p *Principal, req WebhookRequest) (*Webhook, error) {
	if err := s.prefix(p, RightOperate, req.ScopePrefix); err != nil {
		return nil, err
	}
	events := make([]memory.ChangeKind, len(req.Events))
	for i, e := range req.Events {
		events[i] = memory.ChangeKind(e)
	}
	w, secret, err := s.webhooks.Create(ctx, webhook.CreateParams{URL: req.URL, ScopePrefix: req.ScopePrefix, Events: events, CreatedBy: p.Name})
	if err != nil {
		return nil, s.webhookError(ctx, 0, err)
	}
	out := WebhookOf(w)
	out.Secret = secret
	return &out, nil
}

func (s *Server) listWebhooks(ctx context.Context, p *Principal) (*Webhooks, error) {
	if err := s.need(p, RightOperate); err != nil {
		return nil, err
	}
	ws, err := s.webhooks.List(ctx, p.Sees)
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	out := &Webhooks{Webhooks: []Webhook{}}
	for _, w := range ws {
		out.Webhooks = append(out.Webhooks, WebhookOf(w))
	}
	return out, nil
}

// visibleWebhook is webhook id when p may manage it; one outside p's prefixes is not
// found.
func (s *Server) visibleWebhook(ctx context.Context, p *Principal, id int64) (*webhook.Webhook, error) {
	if err := s.need(p, RightOperate); err != nil {
		return nil, err
	}
	w, err := s.webhooks.Get(ctx, id)
	if err != nil {
		return nil, s.webhookError(ctx, id, err)
	}
	if !p.Sees(w.ScopePrefix) {
		return nil, notFound("webhook", id)
	}
	return w, nil
}

func (s *Server) deleteWebhook(ctx context.Context, p *Principal, id int64) (*Webhook, error) {
	w, err := s.visibleWebhook(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := s.webhooks.Delete(ctx, id); err != nil {
		return nil, s.webhookError(ctx, id, err)
	}
	out := WebhookOf(w)
	return &out, nil
}

func (s *Server) testWebhook(ctx context.Context, p *Principal, id int64) (*WebhookTest, error) {
	if _, err := s.visibleWebhook(ctx, p, id); err != nil {
		return nil, err
	}
	got, err := s.webhooks.Test(ctx, id, 0)
	if err != nil {
		return nil, s.webhookError(ctx, id, err)
	}
	return &WebhookTest{Status: got.Status, OK: got.Error == "", Error: got.Error}, nil
}

func (s *Server) rotateWebhook(ctx context.Context, p *Principal, id int64) (*Webhook, error) {
	if _, err := s.visibleWebhook(ctx, p, id); err != nil {
		return nil, err
	}
	secret, err := s.webhooks.Rotate(ctx, id)
	if err != nil {
		return nil, s.webhookError(ctx, id, err)
	}
	w, err := s.webhooks.Get(ctx, id)
	if err != nil {
		return nil, s.webhookError(ctx, id, err)
	}
	out := WebhookOf(w)
	out.Secret = secret
	return &out, nil
}

func (s *Server) updateWebhook(ctx context.Context, p *Principal, id int64, req WebhookUpdate) (*Webhook, error) {
	if _, err := s.visibleWebhook(ctx, p, id); err != nil {
		return nil, err
	}
	up := webhook.UpdateParams{URL: req.URL}
	if req.Events != nil {
		events := make([]memory.ChangeKind, len(*req.Events))
		for i, e := range *req.Events {
			events[i] = memory.ChangeKind(e)
		}
		up.Events = &events
	}
	w, err := s.webhooks.Update(ctx, id, up)
	if err != nil {
		return nil, s.webhookError(ctx, id, err)
	}
	out := WebhookOf(w)
	return &out, nil
}

func (s *Server) enableWebhook(ctx context.Context, p *Principal, id int64) (*Webhook, error) {
	if _, err := s.visibleWebhook(ctx, p, id); err != nil {
		return nil, err
	}
	w, err := s.webhooks.Enable(ctx, id)
	if err != nil {
		return nil, s.webhookError(ctx, id, err)
	}
	out := WebhookOf(w)
	return &out, nil
}

func (s *Server) resendWebhook(ctx context.Context, p *Principal, id int64, req WebhookResend) (*WebhookResent, error) {
	if _, err := s.visibleWebhook(ctx, p, id); err != nil {
		return nil, err
	}
	n, err := s.webhooks.Resend(ctx, id, webhook.ResendParams{MessageID: req.MessageID, All: req.All})
	if err != nil {
		return nil, s.webhookError(ctx, id, err)
	}
	return &WebhookResent{Resent: n}, nil
}

func (s *Server) webhookDeliveries(ctx context.Context, p *Principal, in *webhookDeliveriesInput) (*WebhookDeliveries, error) {
	if _, err := s.visibleWebhook(ctx, p, in.ID); err != nil {
		return nil, err
	}
	ds, err := s.webhooks.Deliveries(ctx, in.ID, webhook.DeliveriesParams{State: in.State, Limit: in.Limit})
	if err != nil {
		return nil, s.webhookError(ctx, in.ID, err)
	}
	out := &WebhookDeliveries{Deliveries: []WebhookDelivery{}}
	for _, d := range ds {
		out.Deliveries = append(out.Deliveries, DeliveryOf(d))
	}
	return out, nil
}

// WebhookRenderer builds deliveries' bodies as the feed renders changes, from the rows
// as they are when each is sent.
func WebhookRenderer(store *memory.Store, feed *changes.Reader) webhook.Renderer {
	return func(ctx context.Context, scope string, position int64) (*webhook.Message, error) {
		c, err := feed.Get(ctx, scope, position)
		if err != nil || c == nil {
			return nil, err
		}
		item, err := RenderChange(ctx, store, *c)
		if err != nil || item == nil {
			return nil, err
		}
		return &webhook.Message{Type: item.Type, Timestamp: item.Timestamp, Data: item.Data}, nil
	}
}
