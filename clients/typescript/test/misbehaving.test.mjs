// A server that misbehaves: every failure is one of the client's errors, and a call ends
// within its timeout whatever the server does. The assertions are on errors and on what
// the server received; where time matters, the server is made slower than the client's
// timeout by a wide margin, so that the old behaviour (waiting it out, or trying again)
// fails the test whatever the machine's speed.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  Client,
  CredoError,
  InvalidRequest,
  InvalidResponse,
  RateLimited,
  Redirected,
  ServerError,
  TimeoutError,
  TransportError,
  retryAfterSeconds,
} from "@credohq/credo";
import { drip, errorStub, raw, serve, stub } from "./server.mjs";

const EPISODE = {
  id: 1,
  scope: "user:1",
  external_id: null,
  state: "applied",
  attempts: 1,
  last_error: null,
  occurred_at: "2026-03-20T14:00:00Z",
  received_at: "2026-03-20T14:00:01Z",
  processed_at: "2026-03-20T14:00:02Z",
  redacted_at: null,
};

const everyOperation = (c) => [
  ["enqueueTranscripts", () => c.addTranscript("user:1", [{ role: "user", content: "hi" }])],
  ["getEpisode", () => c.episode(1)],
  ["wait", () => c.wait(1, { timeout: 5000 })],
  ["listBeliefs", () => c.beliefs("user:1")],
  ["beliefHistory", () => c.history(1)],
  ["listEvents", () => c.events("user:1")],
  ["audit", () => c.audit({ scope: "user:1" })],
  ["getContext", () => c.context("user:1", "where?")],
  ["ask", () => c.ask("user:1", "where?")],
  ["listConflicts", () => c.conflicts("user:1")],
  ["resolveConflict", () => c.resolve(1, "apply")],
  ["assertBelief", () => c.assertBelief({ scope: "user:1", statement: "User is tall", attribute: "height" })],
  ["correctBelief", () => c.correct(1, { statement: "User is short" })],
  ["revertEvent", () => c.revert(1)],
  ["forget", () => c.forget({ scope: "user:1", all: true })],
  ["setPolicy", () => c.setPolicy({ scope_prefix: "user:" })],
  ["getPolicies", () => c.policies()],
  ["unsetPolicy", () => c.unsetPolicy("user:")],
];

/** An HTTP/1.0 answer's head. */
const head = (status, headers) =>
  `HTTP/1.0 ${status} X\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;

describe("Retry-After", () => {
  test("beyond the deadline is thrown at once, with how long to wait", async (t) => {
    // The old client waited 28 hours here.
    for (const value of ["100000", new Date(Date.now() + 86_400_000).toUTCString()]) {
      const s = await errorStub(t, 429, "rate_limited", { "Retry-After": value });
      await assert.rejects(new Client({ url: s.url, key: "k", timeout: 5000, maxRetries: 3 }).episode(1), (e) => {
        assert.ok(e instanceof RateLimited, value);
        assert.ok(e.retryAfter > 5, value);
        return true;
      });
      assert.equal(s.requests.length, 1, `${value}: no retry, its wait would end past the timeout`);
    }
  });

  test("not a time falls back to the backoff", async (t) => {
    for (const value of ["inf", "Infinity", "nan", "-1", "1e3", "0x10", "soon", "", "9".repeat(400)]) {
      const s = await errorStub(t, 429, "rate_limited", { "Retry-After": value });
      await assert.rejects(new Client({ url: s.url, key: "k", maxRetries: 1, backoff: 1 }).episode(1), (e) => {
        assert.ok(e instanceof RateLimited && e.retryAfter === undefined, value);
        return true;
      });
      assert.equal(s.requests.length, 2, `${value}: retried after the backoff`);
    }
  });

  test("seconds and dates", () => {
    const now = Date.parse("2026-03-20T14:00:00Z");
    assert.equal(retryAfterSeconds(" 120 ", now), 120);
    assert.equal(retryAfterSeconds("1.5", now), 1.5);
    assert.equal(retryAfterSeconds("Fri, 20 Mar 2026 14:01:30 GMT", now), 90);
    assert.equal(retryAfterSeconds("Fri, 20 Mar 2026 13:00:00 GMT", now), 0, "a date past: now");
    assert.equal(retryAfterSeconds("٣", now), undefined, "ASCII digits only");
    assert.equal(retryAfterSeconds(null, now), undefined);
  });
});

describe("the deadline", () => {
  test("a body dripped slowly", async (t) => {
    // Each byte comes well within any per-read timeout; the whole answer (over 200 bytes)
    // takes over 10 s.
    const body = JSON.stringify(EPISODE);
    const s = await raw(t, async (socket) => {
      socket.write(head(200, { "Content-Type": "application/json", "Content-Length": body.length }));
      await drip(socket, body, 50);
      socket.end();
    });
    await assert.rejects(new Client({ url: s.url, key: "k", timeout: 500, maxRetries: 3, backoff: 1 }).episode(1), TimeoutError);
    assert.equal(s.requests.length, 1, "the timeout is the whole call's: no time is left to try again");
  });

  test("headers dripped slowly", async (t) => {
    const body = JSON.stringify(EPISODE);
    const s = await raw(t, async (socket) => {
      await drip(socket, head(200, { "Content-Type": "application/json", "X-Pad": "x".repeat(40), "Content-Length": body.length }), 50);
      socket.end(body);
    });
    await assert.rejects(new Client({ url: s.url, key: "k", timeout: 500 }).episode(1), TimeoutError);
  });

  test("retries and their waits end within the timeout", async (t) => {
    const s = await errorStub(t, 503, "api_disabled");
    // The server's error; or, on a machine slow enough that a retry is still waiting for
    // its answer when the deadline passes, the timeout. Either way within the deadline.
    await assert.rejects(
      new Client({ url: s.url, key: "k", timeout: 1000, maxRetries: 10, backoff: 400 }).beliefs("user:1"),
      (e) => e instanceof ServerError || e instanceof TimeoutError,
    );
    // The shortest waits of three retries add up to 200 + 400 + 800 ms: past 1 s.
    assert.ok(s.requests.length <= 3 + 1, `${s.requests.length} requests: the old client tried 11 times over 5 minutes`);
  });
});

describe("answers cut short", () => {
  test("a truncated body", async (t) => {
    // Content-Length says 100; 10 bytes come, then the connection closes.
    const s = await raw(t, (socket) => socket.end(head(200, { "Content-Length": 100 }) + '{"id": 1, '));
    const c = new Client({ url: s.url, key: "k", maxRetries: 2, backoff: 1 });
    await assert.rejects(c.episode(1), (e) => e instanceof TransportError && !(e instanceof TimeoutError));
    assert.equal(s.requests.length, 3, "a GET cut short is tried again");
    await assert.rejects(c.assertBelief({ scope: "user:1", statement: "User is tall", attribute: "height" }), TransportError);
    assert.equal(s.requests.length, 4, "an operator's change is not sent twice");
  });

  test("closed without an answer", async (t) => {
    const s = await raw(t, (socket) => socket.destroy());
    await assert.rejects(
      new Client({ url: s.url, key: "k", maxRetries: 1, backoff: 1 }).episode(1),
      (e) => e instanceof TransportError && !(e instanceof TimeoutError),
    );
    assert.equal(s.requests.length, 2);
  });
});

describe("answers that are not the API's", () => {
  test("not JSON", async (t) => {
    const page = "<!doctype html><html><body>Sign in to the Wi-Fi</body></html>";
    for (const [body, type] of [
      [page, "text/html"],
      ["", "application/json"],
      [Buffer.from([0xff, 0xfe, 0x7b]), "application/json"],
      ["[".repeat(100000), "application/json"],
      ['{"id": 1', "application/json"],
    ]) {
      const s = await serve(t, (_req, res) => {
        res.writeHead(200, { "Content-Type": type });
        res.end(body);
      });
      await assert.rejects(new Client({ url: s.url, key: "k", maxRetries: 3, backoff: 1 }).episode(1), (e) => {
        assert.ok(e instanceof InvalidResponse && e.status === 200, String(e));
        assert.match(e.message, new RegExp(`\\(${type}\\) is not JSON`));
        return true;
      });
      assert.equal(s.requests.length, 1, "not retried: it would answer the same");
    }
  });

  test("every operation checks its answer", async (t) => {
    for (const body of [{ unexpected: true }, [], "a string", null, 7]) {
      const s = await stub(t, 200, JSON.stringify(body));
      for (const [op, call] of everyOperation(new Client({ url: s.url, key: "k", maxRetries: 0 }))) {
        await assert.rejects(call(), (e) => {
          assert.ok(e instanceof InvalidResponse && e.status === 200, `${op} answered ${JSON.stringify(body)}: ${e}`);
          return true;
        });
      }
    }
  });

  test("fields of the wrong type", async (t) => {
    const belief = {
      id: 1,
      scope: "user:1",
      subject: "user",
      attribute: "location",
      kind: "attribute",
      statement: "User lives in Miami",
      status: "active",
      confidence: 0.9,
      origin: "user_stated",
      valid_from: "2026-02-20T00:00:00Z",
      valid_until: null,
      recorded_at: "2026-03-20T14:00:00Z",
      retired_at: null,
      supersedes: null,
      superseded_by: null,
      episode_id: 1,
      quote: "I moved to Miami",
      reinforced_count: 0,
      last_seen_at: "2026-03-20T14:00:00Z",
      depends_on: null,
      needs_review: false,
      episodes: [1],
    };
    const beliefs = { mode: "current", auto_history: false, ranked: false };
    const cases = [
      [(c) => c.episode(1), { ...EPISODE, id: "1" }, "id: expected integer, got string"],
      [(c) => c.episode(1), { ...EPISODE, attempts: true }, "attempts: expected integer, got boolean"],
      [(c) => c.episode(1), { ...EPISODE, attempts: 1.5 }, "attempts: expected integer, got number"],
      [(c) => c.episode(1), { id: 1, scope: "user:1" }, "is missing"],
      [(c) => c.beliefs("user:1"), { ...beliefs, beliefs: 5 }, "beliefs: expected array, got integer"],
      [(c) => c.beliefs("user:1"), { ...beliefs, beliefs: [belief, 5] }, "beliefs[1]: expected object, got integer"],
      [(c) => c.beliefs("user:1"), { ...beliefs, beliefs: [{ ...belief, supersedes: ["2"] }] }, "beliefs[0].supersedes[0]: expected integer"],
      [(c) => c.beliefs("user:1"), { ...beliefs, beliefs: [{ ...belief, confidence: "high" }] }, "beliefs[0].confidence: expected number"],
      [(c) => c.history(1), { beliefs: [{ ...belief, statement: null }] }, "beliefs[0].statement: expected string, got null"],
      [(c) => c.forget({ scope: "user:1", all: true }), { purged: { what: "scope", counts: { belief: "4" }, relinked: 0 } }, "purged.counts.belief: expected integer"],
    ];
    for (const [call, body, problem] of cases) {
      const s = await stub(t, 200, body);
      await assert.rejects(call(new Client({ url: s.url, key: "k", maxRetries: 0 })), (e) => {
        assert.ok(e instanceof InvalidResponse, String(e));
        assert.ok(e.message.includes(problem), `${e.message} lacks ${problem}`);
        return true;
      });
    }
  });

  test("error answers of another shape", async (t) => {
    for (const [body, code, message, details] of [
      ['{"error": {"code": "invalid_request", "message": "bad", "details": 5}}', "invalid_request", "bad", []],
      ['{"error": {"code": "invalid_request", "message": "bad", "details": [1]}}', "invalid_request", "bad", ["1"]],
      ['{"error": ["invalid_request"]}', "http_400", '{"error": ["invalid_request"]}', []],
      ['{"error": null}', "http_400", '{"error": null}', []],
      ["[".repeat(100000), "http_400", "[".repeat(200), []],
    ]) {
      const s = await stub(t, 400, body);
      await assert.rejects(new Client({ url: s.url, key: "k" }).episode(1), (e) => {
        assert.ok(e instanceof InvalidRequest);
        assert.deepEqual([e.status, e.code, e.message, e.details], [400, code, message, details]);
        return true;
      });
    }
  });

  test("what a newer server adds is let through", async (t) => {
    const s = await stub(t, 200, { ...EPISODE, new_field: { x: [1] } });
    assert.equal((await new Client({ url: s.url, key: "k" }).episode(1)).state, "applied");
  });

  test("every failure is a CredoError", async (t) => {
    const s = await stub(t, 200, "<html>");
    await assert.rejects(new Client({ url: s.url, key: "k" }).episode(1), CredoError);
  });
});

describe("wait", () => {
  test("a timeout says why each episode is pending", async (t) => {
    // The worker tried twice and the model server was down: the error says so, not only
    // which episodes are pending.
    const s = await serve(t, (req, res) => {
      const id = Number(req.url.split("?")[0].split("/").pop());
      const tried = id === 7;
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ ...EPISODE, id, state: "pending", attempts: tried ? 2 : 0,
        last_error: tried ? "chat: connection refused" : null, processed_at: null }));
    });
    await assert.rejects(new Client({ url: s.url, key: "k" }).wait([7, 8], { timeout: 1000, poll: 50 }), (e) => {
      assert.ok(e instanceof TimeoutError);
      assert.match(e.message, /episodes 7, 8 still pending/);
      assert.match(e.message, /7: 2 attempts, last error: chat: connection refused/);
      assert.match(e.message, /8: not tried yet/);
      return true;
    });
  });
});

// No redirect is followed: fetch's own following turned a POST into a GET and reported
// the other host's 404 as NotFound (the Python client also sent it the key).
describe("redirects", () => {
  /** A server of another origin that records each request's Authorization header and answers 404. */
  async function otherHost(t) {
    const keys = [];
    const s = await serve(t, (req, res) => {
      keys.push(req.headers.authorization ?? "");
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { code: "not_found", message: "elsewhere" } }));
    });
    return { ...s, keys };
  }

  test("to another host", async (t) => {
    const other = await otherHost(t);
    const calls = [
      ["GET", (c) => c.beliefs("user:1")],
      ["POST", (c) => c.assertBelief({ scope: "user:1", statement: "User is tall", attribute: "height" })],
      ["export", async (c) => { for await (const _ of c.export({ scope: "user:1" })); }],
    ];
    for (const status of [301, 302, 303, 307, 308]) {
      for (const [name, call] of calls) {
        const s = await serve(t, (_req, res) => {
          res.writeHead(status, { Location: `${other.url}/v1/beliefs` });
          res.end();
        });
        const c = new Client({ url: s.url, key: "credo_secret", maxRetries: 3, backoff: 1 });
        await assert.rejects(call(c), (e) => {
          assert.ok(e instanceof Redirected, `${status} ${name}: ${e}`);
          assert.ok(e instanceof InvalidResponse);
          assert.equal(e.status, status);
          assert.equal(e.location, `${other.url}/v1/beliefs`);
          assert.match(e.message, /follows no redirect/);
          return true;
        });
        assert.equal(s.requests.length, 1, `${status} ${name}: not retried`);
      }
    }
    assert.deepEqual(other.requests, [], "the other host got no request");
    assert.deepEqual(other.keys, [], "nor the key");
  });

  test("to the same host", async (t) => {
    // The API never redirects: a redirect is a proxy's or a wrong URL's, said at once.
    const s = await serve(t, (_req, res) => {
      res.writeHead(308, { Location: "/api/v1/beliefs" });
      res.end();
    });
    const c = new Client({ url: s.url, key: "k" });
    await assert.rejects(c.assertBelief({ scope: "user:1", statement: "User is tall", attribute: "height" }), (e) => {
      assert.ok(e instanceof Redirected);
      assert.equal(e.location, "/api/v1/beliefs");
      return true;
    });
    assert.deepEqual(s.requests, ["POST /v1/beliefs"]);
  });
});
