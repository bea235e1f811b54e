// What a real worker cannot be made to do on demand: answer 5xx to anything, hang,
// refuse connections. Small local servers stand in for it; they count what they
// receive, so the retry policy is checked by counts, not by timing.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { createServer as createTCPServer } from "node:net";
import { test } from "node:test";
import { Client, NotFound, RateLimited, ServerError, TimeoutError, TransportError } from "@credohq/credo";
import { errorStub, stub } from "./server.mjs";

test("5xx is retried when safe to repeat, a bounded number of times", async (t) => {
  const s = await errorStub(t, 503, "api_disabled");
  const c = new Client({ url: s.url, key: "k", maxRetries: 2, backoff: 1 });
  await assert.rejects(c.beliefs("user:1"), (e) => e instanceof ServerError && e.status === 503 && e.code === "api_disabled");
  assert.equal(s.requests.length, 3, "the first try and two retries");
  await assert.rejects(c.addTranscript("user:1", [{ role: "user", content: "hi" }]), ServerError);
  assert.equal(s.requests.length, 6, "transcripts are deduplicated: safe to send again");
});

test("5xx is not retried when not safe to repeat", async (t) => {
  const s = await errorStub(t, 500, "internal");
  const c = new Client({ url: s.url, key: "k", maxRetries: 3, backoff: 1 });
  await assert.rejects(c.assertBelief({ scope: "user:1", statement: "User is tall", attribute: "height" }), ServerError);
  await assert.rejects(c.correct(1, { statement: "User is short" }), ServerError);
  await assert.rejects(c.resolve(1, "apply"), ServerError);
  await assert.rejects(c.forget({ scope: "user:1", all: true }), ServerError);
  await assert.rejects(c.revert(1, { note: "wrong" }), ServerError);
  assert.deepEqual(s.requests, [
    "POST /v1/beliefs",
    "POST /v1/beliefs/1/correct",
    "POST /v1/conflicts/1/resolve",
    "POST /v1/forget",
    "POST /v1/events/1/revert",
  ]);
});

test("429 is retried after Retry-After, for any call", async (t) => {
  const s = await errorStub(t, 429, "rate_limited", { "Retry-After": "0" });
  const c = new Client({ url: s.url, key: "k", maxRetries: 1, backoff: 1 });
  await assert.rejects(c.resolve(1, "apply"), (e) => e instanceof RateLimited && e.retryAfter === 0);
  assert.equal(s.requests.length, 2, "refused before anything was done: safe to send again");
});

test("4xx is not retried", async (t) => {
  const s = await errorStub(t, 404, "not_found");
  await assert.rejects(new Client({ url: s.url, key: "k", maxRetries: 3, backoff: 1 }).episode(1), NotFound);
  assert.equal(s.requests.length, 1);
});

test("an answer not from the API keeps its status", async (t) => {
  const s = await stub(t, 502, "oops!", { "Content-Type": "text/html" });
  await assert.rejects(new Client({ url: s.url, key: "k", maxRetries: 0 }).episode(1), (e) => {
    assert.ok(e instanceof ServerError);
    assert.deepEqual([e.code, e.message], ["http_502", "oops!"]);
    return true;
  });
});

test("no answer in time is a TimeoutError, not retried: the timeout is the whole call's", async (t) => {
  // A server that reads requests and never answers them.
  const requests = [];
  const server = createServer((req) => requests.push(req.url));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  const c = new Client({ url: `http://127.0.0.1:${server.address().port}`, key: "k", timeout: 200, maxRetries: 3, backoff: 1 });
  await assert.rejects(c.episode(1), TimeoutError);
  assert.deepEqual(requests, ["/v1/episodes/1"], "no time is left to try again");
});

test("a refused connection is a TransportError", async (t) => {
  const server = createTCPServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = server.address().port;
  await new Promise((resolve) => server.close(resolve));
  await assert.rejects(new Client({ url: `http://127.0.0.1:${port}`, key: "k", maxRetries: 0 }).episode(1), (e) => {
    assert.ok(e instanceof TransportError && !(e instanceof TimeoutError));
    return true;
  });
});

test("a url that is not http(s), or a timeout not above 0, is refused at once", () => {
  for (const url of ["127.0.0.1:9464", "ftp://127.0.0.1", "http://[bad", "localhost"]) {
    assert.throws(() => new Client({ url, key: "k" }), TypeError, url);
  }
  assert.equal(new Client({ url: "https://memory.example/base/", key: "k" }).url, "https://memory.example/base");
  for (const timeout of [0, -1, NaN]) {
    assert.throws(() => new Client({ url: "http://127.0.0.1:9464", timeout }), RangeError, String(timeout));
  }
});

test("verifyWebhook accepts the Standard Webhooks reference vector and nothing else", async () => {
  const { verifyWebhook, WebhookVerificationError } = await import("@credohq/credo");
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const headers = {
    "Webhook-Id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "Webhook-Timestamp": "1614265330",
    "Webhook-Signature": "v1,bad v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  };
  const body = '{"test": 2432232314}';
  const now = new Date(1614265330 * 1000);
  assert.deepEqual(await verifyWebhook(secret, headers, body, { now }), { test: 2432232314 });
  await assert.rejects(verifyWebhook(secret, headers, body + " ", { now }), WebhookVerificationError);
  await assert.rejects(verifyWebhook(secret, headers, body, { now: new Date((1614265330 + 301) * 1000) }), WebhookVerificationError);
  await assert.rejects(verifyWebhook(secret, new Headers({ "webhook-id": "x" }), body, { now }), WebhookVerificationError);
});
