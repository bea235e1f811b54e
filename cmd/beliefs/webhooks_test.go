package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/webhook"
)

func TestWebhooksCommands(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	var verified atomic.Bool
	var secret atomic.Value
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if s, ok := secret.Load().(string); ok {
			key, err := webhook.ParseSecret(s)
			buf := make([]byte, r.ContentLength)
			_, _ = r.Body.Read(buf)
			verified.Store(err == nil && webhook.Verify(key, r.Header.Get("Webhook-Id"), r.Header.Get("Webhook-Timestamp"), buf, r.Header.Get("Webhook-Signature")))
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer rc.Close()
	c := newCLI(t)
	c.env = map[string]string{}

	// Without WEBHOOK_SECRET_KEY, no webhook is created.
	_, stderr, code := c.run("webhooks", "create", "--url", rc.URL, "--scope-prefix", "acme/")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "WEBHOOK_SECRET_KEY is not set")

	c.env["WEBHOOK_SECRET_KEY"] = "a key of thirty-two characters or more"
	for _, args := range [][]string{
		{"webhooks", "create", "--url", rc.URL, "--scope-prefix", "acme/"}, // loopback, and http
		{"webhooks", "create", "--url", "https://127.0.0.1/x", "--scope-prefix", "acme/"},
		{"webhooks", "create", "--url", "https://example.com/x"},
		{"webhooks", "create", "--url", "https://example.com/x", "--scope-prefix", "acme/", "--events", "belief.born"},
		{"webhooks", "delete"},
	} {
		_, stderr, code := c.run(args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	require.Zero(t, calls.Load())

	c.env["WEBHOOK_ALLOW_PRIVATE"] = "true"
	var made api.Webhook
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("webhooks", "create", "--url", rc.URL, "--scope-prefix", "acme/",
		"--events", "revision.applied,scope.purged", "--json")), &made))
	require.Positive(t, made.ID)
	require.True(t, strings.HasPrefix(made.Secret, "whsec_"))
	require.Equal(t, []string{"revision.applied", "scope.purged"}, made.Events)
	secret.Store(made.Secret)

	out := c.mustRun("webhooks", "test", "--id", strconv.FormatInt(made.ID, 10))
	require.Contains(t, out, "answered 202")
	require.True(t, verified.Load(), "the test message is signed with the secret shown")

	// A whole-scope purge made by the CLI leaves nothing that names the scope: no
	// delivery of its changes, and no announcement of its own.
	c.seedMove("acme/user:1")
	c.mustRun("forget", "--scope", "acme/user:1", "--all", "--purge", "--yes")
	var listed []api.Webhook
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("webhooks", "list", "--json")), &listed))
	require.Len(t, listed, 1)
	require.Zero(t, listed[0].Pending)
	require.Nil(t, listed[0].OldestUndelivered)
	require.Empty(t, listed[0].Secret, "the secret is never listed")
	out = c.mustRun("webhooks", "list")
	require.Contains(t, out, rc.URL)

	id := strconv.FormatInt(made.ID, 10)
	out = c.mustRun("webhooks", "update", "--id", id, "--url", rc.URL+"/v2", "--events", "all")
	require.Contains(t, out, "every type")
	require.Contains(t, out, rc.URL+"/v2")
	require.Contains(t, c.mustRun("webhooks", "enable", "--id", id), "enabled")
	var log []api.WebhookDelivery
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("webhooks", "log", "--id", id, "--json")), &log))
	require.NotNil(t, log)
	require.Contains(t, c.mustRun("webhooks", "resend", "--id", id, "--all"), "0 deliveries queued again")
	for _, args := range [][]string{
		{"webhooks", "update", "--id", id},
		{"webhooks", "update", "--id", id, "--url", "ftp://x"},
		{"webhooks", "resend", "--id", id},
		{"webhooks", "log", "--id", id, "--state", "lost"},
	} {
		_, stderr, code := c.run(args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	_, _, code = c.run("webhooks", "resend", "--id", id, "--message", "msg_9")
	require.Equal(t, 3, code, "no such delivery")

	rotated := c.mustRun("webhooks", "rotate", "--id", strconv.FormatInt(made.ID, 10))
	require.Contains(t, rotated, "whsec_")
	c.mustRun("webhooks", "delete", "--id", strconv.FormatInt(made.ID, 10))
	_, _, code = c.run("webhooks", "delete", "--id", strconv.FormatInt(made.ID, 10))
	require.Equal(t, 3, code)
}
