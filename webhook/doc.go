// Package webhook posts memory's changes to subscribers' URLs, signed as Standard
// Webhooks specifies (webhook-id, webhook-timestamp, webhook-signature), at least once
// and in order per scope, by River jobs inserted in the transaction of the change.
//
// A subscription (Webhooks) has a URL, a scope prefix and event types, and a secret
// (whsec_ and base64) shown once and stored sealed with WEBHOOK_SECRET_KEY, so that the
// database alone cannot sign. Dispatcher follows the change feed: for each change it
// writes one delivery per matching webhook and one River job. Worker sends them: the
// body is built when it is sent, from the rows as they are then (a purge erased what is
// gone), and a purge waits for a send of its scope in flight; a failed send is tried
// again with back-off, under the same webhook-id, for RetryFor, and a later delivery of
// the same webhook and scope waits for it. Guard refuses URLs whose host resolves to a
// loopback, private, link-local or otherwise internal address, at creation and again at
// each connection, and no redirect is followed.
package webhook
