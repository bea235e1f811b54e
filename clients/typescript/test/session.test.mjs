// The client against a real worker: clients/clients_test.go starts one (River on
// PostgreSQL, the HTTP API, a scripted fake model) and runs this suite with
//
//   CREDO_URL          the API
//   CREDO_KEY          a key for the scopes under CREDO_SCOPE_PREFIX, with every right
//   CREDO_SCOPE_PREFIX where this suite writes
//   CREDO_LIMITED_URL  the same worker's API with a rate limit of one request per 2 s
//
// The fake model extracts "User lives in New York City" from "I live in New York City",
// "User lives in Miami" (superseding it) from "I moved to Miami last month", and
// "Account plan is Free" (superseding the plan) from "I switched to the Free plan"; it
// answers "Miami." citing the Miami belief, and fails to answer validly a question that
// says "fail on purpose".
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import {
  Client,
  Forbidden,
  InvalidRequest,
  NotFound,
  RateLimited,
  Refused,
  ServerError,
  Unauthorized,
} from "@credohq/credo";

const NYC = "User lives in New York City";
const MIAMI = "User lives in Miami";

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: this suite runs against a worker, from clients/clients_test.go`);
  return v;
}

const statements = (bs) => bs.map((b) => b.statement);

describe("a scope's story: New York in January, Miami since February", () => {
  let url, key, prefix, scope, client, nyc, first, second;

  before(async () => {
    [url, key, prefix] = [env("CREDO_URL"), env("CREDO_KEY"), env("CREDO_SCOPE_PREFIX")];
    client = new Client({ url, key, backoff: 50 });
    scope = `${prefix}ana`;
    first = await client.addTranscript(
      scope,
      [
        { role: "user", content: "I live in New York City." },
        { role: "assistant", content: "Noted." },
      ],
      { id: "conv-0115", occurredAt: "2026-01-15T10:00:00Z" },
    );
    const applied = await client.wait(first, { timeout: 60_000 });
    assert.deepEqual(applied.map((e) => e.state), ["applied"]);
    [nyc] = (await client.beliefs(scope)).beliefs;
    // Two records at once, the first one again among them.
    second = await client.addTranscripts([
      {
        scope,
        id: "conv-0320",
        occurred_at: new Date(Date.UTC(2026, 2, 20, 14)).toISOString(),
        messages: [
          { role: "user", content: "I moved to Miami last month." },
          { role: "assistant", content: "Welcome!" },
        ],
      },
      {
        scope,
        id: "conv-0115",
        occurred_at: "2026-01-15T10:00:00Z",
        messages: [
          { role: "user", content: "I live in New York City." },
          { role: "assistant", content: "Noted." },
        ],
      },
    ]);
    await client.wait(second, { timeout: 60_000 });
  });

  test("enqueued, with a duplicate", () => {
    assert.equal(first.enqueued, 1);
    assert.equal(second.enqueued, 1);
    assert.equal(second.duplicates, 1);
    assert.equal(second.episode_ids[1], first.episode_ids[0], "a duplicate answers its episode's id");
  });

  test("episode", async () => {
    const e = await client.episode(second.episode_ids[0]);
    assert.equal(e.state, "applied");
    assert.equal(e.external_id, "conv-0320");
    assert.equal(e.scope, scope);
    assert.equal(Date.parse(e.occurred_at), Date.UTC(2026, 2, 20, 14));
    assert.equal(e.last_error, null);
  });

  test("current beliefs", async () => {
    const got = await client.beliefs(scope);
    assert.equal(got.mode, "current");
    assert.deepEqual(statements(got.beliefs), [MIAMI]);
    const [miami] = got.beliefs;
    assert.equal(Date.parse(miami.valid_from), Date.UTC(2026, 1, 20));
    assert.equal(miami.valid_until, null);
    assert.deepEqual(miami.supersedes, [nyc.id]);
    assert.deepEqual(miami.episodes, [second.episode_ids[0]]);
  });

  test("history", async () => {
    const got = await client.beliefs(scope, { history: true });
    assert.equal(got.mode, "history");
    const by = Object.fromEntries(got.beliefs.map((b) => [b.statement, b]));
    assert.deepEqual(Object.keys(by).sort(), [MIAMI, NYC]);
    assert.equal(by[NYC].status, "superseded");
    assert.equal(Date.parse(by[NYC].valid_until), Date.UTC(2026, 1, 20));
    assert.deepEqual(statements(await client.history(by[MIAMI].id)), [NYC, MIAMI]);
  });

  test("as of a date, and as known at a time", async () => {
    const asOf = await client.beliefs(scope, { asOf: "2026-02-01" });
    assert.equal(asOf.mode, "as_of");
    assert.deepEqual(statements(asOf.beliefs), [NYC]);
    // What memory held when it learned of New York: New York, not yet Miami.
    const knownAt = await client.beliefs(scope, { knownAt: nyc.recorded_at });
    assert.equal(knownAt.mode, "known_at");
    assert.deepEqual(statements(knownAt.beliefs), [NYC]);
  });

  test("ranked by a question about the past", async () => {
    const got = await client.beliefs(scope, { query: "Where did the user live before?", k: 5 });
    assert.ok(got.ranked);
    assert.ok(got.auto_history, "a question about the past is answered from history");
    assert.ok(statements(got.beliefs).includes(NYC));
  });

  test("events", async () => {
    const events = await client.events(scope);
    assert.equal(events.length, 1);
    const [e] = events;
    assert.deepEqual([e.action, e.reason, e.origin], ["supersede", "temporal", "extraction"]);
    assert.deepEqual([e.old_statement, e.new_statement], [NYC, MIAMI]);
    assert.equal(e.old_belief_id, nyc.id);
    assert.equal((await client.events(scope, { limit: 1 })).length, 1);
  });

  test("context", async () => {
    const now = await client.context(scope, "Where does the user live?");
    assert.equal(now.mode, "current");
    assert.ok(now.context.startsWith(`Memory of ${scope} `), now.context);
    assert.ok(now.context.includes(`- ${MIAMI} (since 2026-02-20)`), now.context);
    assert.ok(!now.context.includes(NYC));
    const before = await client.context(scope, "Where did the user live before?", { k: 5, budget: 2000 });
    assert.equal(before.mode, "history");
    assert.ok(before.context.includes("No longer true:"), before.context);
    assert.ok(before.context.includes(`- ${NYC} (from 2026-01-15 until 2026-02-20)`), before.context);
    const then = await client.context(scope, "Where does the user live?", { asOf: new Date(Date.UTC(2026, 1, 1)) });
    assert.ok(then.context.includes(NYC) && !then.context.includes(MIAMI), then.context);
  });

  test("ask", async () => {
    const got = await client.ask(scope, "Where does the user live?");
    assert.equal(got.answer, "Miami.");
    assert.deepEqual(statements(got.cited), [MIAMI]);
    assert.deepEqual(got.citations, [got.cited[0].id]);
  });

  test("a model that fails is retried, then its error thrown", async () => {
    const retries = [];
    const c = new Client({ url, key, maxRetries: 2, backoff: 10, onRetry: (r) => retries.push(r) });
    await assert.rejects(c.ask(scope, "Where does the user live? (fail on purpose)"), (e) => {
      assert.ok(e instanceof ServerError);
      assert.deepEqual([e.status, e.code], [502, "model_failed"]);
      return true;
    });
    assert.deepEqual(retries.map((r) => [r.attempt, r.error.code]), [[1, "model_failed"], [2, "model_failed"]]);
  });

  test("a refused revision, resolved", async () => {
    const plan = `${prefix}plan`;
    const pro = await client.assertBelief({ scope: plan, statement: "Account plan is Pro", attribute: "plan", authoritative: true });
    assert.equal(pro.outcome, "accepted");
    const said = await client.addTranscript(plan, [{ role: "user", content: "I switched to the Free plan." }]);
    await client.wait(said, { timeout: 60_000 });
    // Extraction may not change an authoritative belief: refused, and queued.
    assert.deepEqual(statements((await client.beliefs(plan)).beliefs), ["Account plan is Pro"]);
    const items = await client.conflicts(plan);
    assert.equal(items.length, 1);
    const [item] = items;
    assert.deepEqual([item.kind, item.cause, item.status], ["refused", "entrenchment", "open"]);
    assert.equal(item.statement, "Account plan is Free");
    assert.equal(item.target_id, pro.belief_id);
    const decided = await client.resolve(item.id, "apply", { note: "confirmed by mail" });
    assert.equal(decided.conflict.resolution, "applied");
    assert.equal(decided.conflict.note, "confirmed by mail");
    assert.equal(decided.revision?.outcome, "superseded");
    assert.deepEqual(statements((await client.beliefs(plan)).beliefs), ["Account plan is Free"]);
    assert.deepEqual(await client.conflicts(plan), []);
    assert.deepEqual((await client.conflicts(plan, { all: true })).map((c) => c.status), ["resolved"]);
    await assert.rejects(client.resolve(item.id, "dismiss"), (e) => {
      assert.ok(e instanceof Refused);
      assert.equal(e.code, "refused");
      assert.match(e.message, /already resolved/);
      return true;
    });
  });

  test("a revision reverted, a revert refused, and the audit", async () => {
    const trip = `${prefix}trip/`;
    const [a, b] = [`${trip}a`, `${trip}b`];
    // The session's story in two scopes: New York, then Miami superseding it.
    for (const [said, at] of [
      ["I live in New York City.", "2026-01-15T10:00:00Z"],
      ["I moved to Miami last month.", "2026-03-20T14:00:00Z"],
    ]) {
      const batch = [a, b].map((s) => ({ scope: s, occurred_at: at, messages: [{ role: "user", content: said }] }));
      await client.wait(await client.addTranscripts(batch), { timeout: 60_000 });
    }
    const [moved, ...noMore] = await client.events(a);
    assert.deepEqual(noMore, []);
    assert.deepEqual([moved.action, moved.origin, moved.old_statement, moved.new_statement], ["supersede", "extraction", NYC, MIAMI]);
    assert.deepEqual([moved.reverts, moved.reverted_by, moved.reverted_at], [null, null, null]);
    // In b, an operator corrects Miami: that supersede is no longer the latest of its chain.
    const [movedB] = await client.events(b);
    const boston = await client.correct(movedB.new_belief_id, { statement: "User lives in Boston" });
    assert.deepEqual([boston.outcome, boston.target_id], ["superseded", movedB.new_belief_id]);
    const [corrected] = await client.events(b);

    // She was only visiting: the operator reverts the supersede of a.
    const got = await client.revert(moved.id, { note: "She was only visiting Miami." });
    assert.deepEqual([got.revert.action, got.revert.origin, got.revert.reverts], ["revert", "operator", moved.id]);
    assert.equal(got.revert.excerpt, "She was only visiting Miami.");
    assert.deepEqual([got.event.id, got.event.reverted_by], [moved.id, got.revert.id]);
    assert.ok(got.event.reverted_at);
    assert.deepEqual([got.restored, got.retracted, got.unreinforced], [[moved.old_belief_id], [moved.new_belief_id], null]);
    // New York is current again, as it was; Miami is retracted as never true.
    const now = (await client.beliefs(a)).beliefs;
    assert.deepEqual(statements(now), [NYC]);
    assert.deepEqual([now[0].id, now[0].status, now[0].valid_until], [moved.old_belief_id, "active", null]);
    const all = (await client.beliefs(a, { history: true })).beliefs;
    assert.deepEqual(Object.fromEntries(all.map((x) => [x.statement, x.status])), { [NYC]: "active", [MIAMI]: "retracted" });
    // The events, newest first: the revert, and the supersede it undid.
    const [revert, reverted] = await client.events(a);
    assert.deepEqual([revert.id, revert.action, revert.reverts], [got.revert.id, "revert", moved.id]);
    assert.deepEqual([reverted.id, reverted.reverted_by, reverted.reverted_at], [moved.id, got.revert.id, got.event.reverted_at]);

    // Refused, and nothing changes: an event reverted already, and one a later revision built on.
    await assert.rejects(client.revert(moved.id), (e) => {
      assert.ok(e instanceof Refused);
      assert.deepEqual([e.status, e.code], [409, "refused"]);
      assert.ok(e.message.includes(`reverted already, by event ${got.revert.id}`), e.message);
      return true;
    });
    await assert.rejects(client.revert(movedB.id, { note: "too late" }), (e) => {
      assert.ok(e instanceof Refused);
      assert.deepEqual([e.status, e.code], [409, "refused"]);
      assert.ok(e.message.includes(`revert event ${corrected.id} first`), e.message);
      return true;
    });
    assert.deepEqual(statements((await client.beliefs(b)).beliefs), ["User lives in Boston"]);
    assert.equal((await client.events(b)).length, 2);

    // The audit: extraction's supersede of a was reverted; b's stands, corrected by the operator.
    const audit = await client.audit({ scope: a });
    assert.deepEqual([audit.scope, audit.scope_prefix, audit.since], [a, null, null]);
    assert.deepEqual(audit.revisions, [
      { origin: "extraction", action: "supersede", reason: "temporal", applied: 1, reverted: 1, corrected: 0 },
    ]);
    assert.deepEqual(audit.origins, [{ origin: "extraction", applied: 1, reverted: 1, corrected: 0, precision: 0 }]);
    assert.deepEqual([audit.reverts, audit.refusals], [1, []]);
    const both = await client.audit({ scopePrefix: trip });
    assert.deepEqual([both.scope, both.scope_prefix], [null, trip]);
    assert.deepEqual(
      both.origins.map((o) => [o.origin, o.applied, o.reverted, o.corrected, o.precision]),
      [
        ["extraction", 2, 1, 1, 0.5],
        ["operator", 1, 0, 0, 1],
      ],
    );
    assert.equal(both.reverts, 1);
    // Since the revert: the revert alone.
    const since = await client.audit({ scopePrefix: trip, since: got.revert.created_at });
    assert.equal(Date.parse(since.since), Date.parse(got.revert.created_at));
    assert.deepEqual([since.revisions, since.origins, since.reverts], [[], [], 1]);
  });

  test("correct and forget", async () => {
    const music = `${prefix}music`;
    const cello = await client.assertBelief({ scope: music, statement: "User plays the cello", attribute: "instrument" });
    const viola = await client.correct(cello.belief_id, { statement: "User plays the viola" });
    assert.deepEqual([viola.outcome, viola.target_id], ["superseded", cello.belief_id]);
    const forgotten = await client.forget({ scope: music, match: "viola" });
    assert.deepEqual(forgotten.forgotten, [viola.belief_id]);
    assert.deepEqual((await client.beliefs(music)).beliefs, []);
    const purged = await client.forget({ scope: music, all: true, purge: true });
    assert.equal(purged.purged?.what, "scope");
    assert.ok(purged.purged.counts.belief >= 2);
  });

  test("entities: listed, read by any name with history, merged, forgotten", async () => {
    const family = `${prefix}family`;
    const austin = await client.assertBelief({
      scope: family,
      statement: "User's sister lives in Austin",
      attribute: "home_city",
      subject: "user's sister",
    });
    await client.assertBelief({ scope: family, statement: "Sarah plays the cello", attribute: "instrument", subject: "Sarah" });
    await client.assertBelief({ scope: family, statement: "User lives in Boston", attribute: "home_city" });
    const denver = await client.correct(austin.belief_id, { statement: "User's sister lives in Denver", reason: "temporal" });
    assert.equal(denver.outcome, "superseded");
    assert.deepEqual(
      Object.fromEntries((await client.beliefs(family)).beliefs.map((b) => [b.statement, b.entity])),
      { "User's sister lives in Denver": "sister", "Sarah plays the cello": "sarah", "User lives in Boston": "user" },
    );

    const entities = await client.listEntities(family);
    assert.deepEqual(entities.map((e) => e.key), ["user", "sarah", "sister"], "the user first, then by name");
    const sister = entities[2];
    assert.deepEqual([sister.name, sister.kind, sister.aliases, sister.current_beliefs], ["sister", "person", [], 1]);
    // Found by any way of naming her, path-escaped; the slot's chain with history.
    const view = await client.getEntity(family, "my sister", { history: true });
    assert.equal(view.key, "sister");
    assert.equal(view.slots.length, 1);
    assert.equal(view.slots[0].attribute, "home_city");
    assert.deepEqual(statements(view.slots[0].current), ["User's sister lives in Denver"]);
    assert.deepEqual(statements(view.slots[0].history), ["User's sister lives in Austin", "User's sister lives in Denver"]);
    assert.equal((await client.getEntity(family, "User's Sister")).slots[0].history, undefined);
    await assert.rejects(client.getEntity(family, "Sarahh"), (e) => {
      assert.ok(e instanceof NotFound);
      assert.equal(e.code, "not_found");
      assert.match(e.message, /did you mean "Sarah"\?/);
      return true;
    });

    // Sarah is the sister: her name and belief move, nothing else changes.
    const merged = await client.mergeEntities({ scope: family, into: "my sister", other: "Sarah", note: "Sarah is her name" });
    assert.deepEqual([merged.entity.key, merged.entity.aliases, merged.moved, merged.closed_items], ["sister", ["Sarah"], 1, []]);
    assert.deepEqual(merged.entity.slots.map((s) => s.attribute).sort(), ["home_city", "instrument"]);
    assert.equal((await client.getEntity(family, "sarah")).key, "sister");
    assert.deepEqual((await client.listEntities(family)).map((e) => e.key), ["user", "sister"]);
    await assert.rejects(client.mergeEntities({ scope: family, into: "sister", other: "Sarah" }), InvalidRequest);

    // Forget everything about her.
    const forgotten = await client.forget({ scope: family, entity: "Sarah" });
    assert.equal(forgotten.forgotten?.length, 3);
    assert.deepEqual(statements((await client.beliefs(family)).beliefs), ["User lives in Boston"]);
  });

  test("export and import", async () => {
    const [from, to] = [`${prefix}moving`, `${prefix}moved`];
    const cello = await client.assertBelief({ scope: from, statement: "User plays the cello", attribute: "instrument" });
    await client.correct(cello.belief_id, { statement: "User plays the viola" });
    const records = [];
    for await (const r of client.export({ scope: from })) records.push(r);
    assert.equal(records[0].format, "credo-export");
    assert.deepEqual(records[0].scopes, [from]);
    assert.equal(records.at(-1).type, "end");
    assert.equal(records.filter((r) => r.type === "belief").length, 2);
    const file = records.map((r) => JSON.stringify(r) + "\n").join("");
    const got = await client.importFile(new TextEncoder().encode(file), { scopeMap: { [from]: to } });
    assert.deepEqual(got.scopes.map((s) => [s.scope, s.exported_as, s.beliefs, s.events]), [[to, from, 2, 1]]);
    const all = async (s) => statements((await client.beliefs(s, { history: true })).beliefs);
    assert.deepEqual(await all(to), await all(from));
    await assert.rejects(client.importFile(file, { scopeMap: { [from]: to } }), (e) => {
      assert.ok(e instanceof Refused);
      assert.match(e.message, /already holds memory/);
      return true;
    });
    await assert.rejects(client.importFile(file.replace('"status":"active"', '"status":"dreamt"'), { scopeMap: { [from]: `${prefix}x` } }), (e) => {
      assert.ok(e instanceof InvalidRequest);
      assert.match(e.message, /line \d+/);
      return true;
    });
  });

  test("an organisation's policy: set, in force, redacting, unset", async () => {
    const org = `${prefix}org/`;
    const set = await client.setPolicy({
      scope_prefix: org,
      instructions: "Keep product facts.",
      redact_patterns: [{ name: "employee_id", regex: "EMP-[0-9]{6}" }],
    });
    assert.deepEqual([set.scope_prefix, set.redact, set.redact_patterns.length], [org, null, 1]);
    const inForce = await client.policies({ scope: `${org}user:1` });
    assert.deepEqual(inForce.map((p) => p.scope_prefix), [org]);
    assert.ok((await client.policies()).some((p) => p.scope_prefix === org));
    const got = await client.addTranscript(`${org}user:1`, [{ role: "user", content: "I am EMP-123456, card 4111 1111 1111 1111." }]);
    assert.deepEqual(got.redacted, { card: 1, "pattern:employee_id": 1 });
    const removed = await client.unsetPolicy(org);
    assert.equal(removed.instructions, "Keep product facts.");
    await assert.rejects(client.unsetPolicy(org), NotFound);
    await assert.rejects(client.setPolicy({ scope_prefix: org, redact: ["ssn"] }), InvalidRequest);
  });

  test("the change feed: a page, its cursor, the iterator", async () => {
    const page = await client.changes({ scope });
    const applied = page.changes.filter((c) => c.type === "revision.applied");
    assert.equal(applied.length, 1);
    assert.equal(applied[0].data.new_statement, MIAMI);
    const again = await client.changes({ scope, after: page.cursor, wait: 0 });
    assert.deepEqual(again.changes, []);
    const it = client.iterChanges({ scopePrefix: scope, wait: 0 });
    const { value } = await it.next();
    assert.deepEqual(value.change, page.changes[0]);
    await it.return(undefined);
    await assert.rejects(client.changes({ scope, after: "not a cursor" }), InvalidRequest);
  });

  test("a webhook: created, tested, signed, rotated, deleted", async (t) => {
    const { createServer } = await import("node:http");
    const { verifyWebhook } = await import("@credohq/credo");
    const got = [];
    const srv = createServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        got.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
    });
    await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
    t.after(() => srv.close());
    const made = await client.createWebhook({
      url: `http://127.0.0.1:${srv.address().port}/hook`, scope_prefix: `${prefix}hooks/`, events: ["revision.applied"],
    });
    assert.ok(made.secret.startsWith("whsec_"));
    assert.ok((await client.webhooks()).some((w) => w.id === made.id));
    const tested = await client.testWebhook(made.id);
    assert.deepEqual([tested.status, tested.ok], [204, true]);
    const msg = await verifyWebhook(made.secret, got[0].headers, new Uint8Array(got[0].body));
    assert.equal(msg.type, "webhook.test");
    const rotated = await client.rotateWebhookSecret(made.id);
    assert.notEqual(rotated.secret, made.secret);
    const updated = await client.updateWebhook(made.id, { url: `http://127.0.0.1:${srv.address().port}/v2`, events: [] });
    assert.deepEqual([updated.events, updated.url.endsWith("/v2")], [[], true]);
    assert.equal((await client.enableWebhook(made.id)).disabled, false);
    assert.deepEqual(await client.webhookDeliveries(made.id, { state: "failed" }), []);
    assert.equal(await client.resendWebhook(made.id, { all: true }), 0);
    await assert.rejects(client.resendWebhook(made.id, { message_id: "msg_9" }), NotFound);
    assert.equal((await client.deleteWebhook(made.id)).id, made.id);
    await assert.rejects(client.deleteWebhook(made.id), NotFound);
  });

  test("401", async () => {
    await assert.rejects(new Client({ url, key: "credo_000000000000_wrong" }).beliefs(scope), (e) => {
      assert.ok(e instanceof Unauthorized);
      assert.deepEqual([e.status, e.code], [401, "unauthorized"]);
      return true;
    });
  });

  test("403", async () => {
    await assert.rejects(client.beliefs(`elsewhere/${scope}`), (e) => e instanceof Forbidden && e.code === "forbidden");
  });

  test("404", async () => {
    await assert.rejects(client.episode(1e15), (e) => {
      assert.ok(e instanceof NotFound);
      assert.deepEqual([e.status, e.code], [404, "not_found"]);
      assert.match(e.message, /not found/);
      return true;
    });
    await assert.rejects(client.history(1e15), NotFound);
  });

  test("400", async () => {
    await assert.rejects(client.beliefs(scope, { k: 0 }), (e) => e instanceof InvalidRequest && e.code === "invalid_request");
    await assert.rejects(client.addTranscript(scope, [{ role: "robot", content: "beep" }]), (e) => {
      assert.ok(e instanceof InvalidRequest);
      assert.match(e.message, /robot/);
      return true;
    });
  });

  test("429, then retried", async () => {
    const limited = env("CREDO_LIMITED_URL");
    // Without retries, the limit shows: one request every 2 s, so one of a few in a row is refused.
    const hasty = new Client({ url: limited, key, maxRetries: 0 });
    let refused;
    for (let i = 0; i < 5 && !refused; i++) {
      try {
        await hasty.beliefs(scope);
      } catch (e) {
        if (!(e instanceof RateLimited)) throw e;
        refused = e;
      }
    }
    assert.ok(refused, "five requests in a row, none refused");
    assert.deepEqual([refused.status, refused.code], [429, "rate_limited"]);
    assert.ok(refused.retryAfter >= 1, String(refused.retryAfter));
    // With retries, every call succeeds: the refused ones after their Retry-After.
    const retries = [];
    const patient = new Client({ url: limited, key, maxRetries: 3, onRetry: (r) => retries.push(r) });
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(statements((await patient.beliefs(scope)).beliefs), [MIAMI]);
    }
    assert.ok(retries.length > 0, "no call was refused");
    for (const r of retries) {
      assert.equal(r.error.code, "rate_limited");
      assert.equal(r.delay, r.error.retryAfter * 1000, "waits as long as the server says");
    }
  });
});
