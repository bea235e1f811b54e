"""The client against a real worker: clients/clients_test.go starts one (River on
PostgreSQL, the HTTP API, a scripted fake model) and runs this suite with

    CREDO_URL          the API
    CREDO_KEY          a key for the scopes under CREDO_SCOPE_PREFIX, with every right
    CREDO_SCOPE_PREFIX where this suite writes
    CREDO_LIMITED_URL  the same worker's API with a rate limit of one request per 2 s

The fake model extracts "User lives in New York City" from "I live in New York City",
"User lives in Miami" (superseding it) from "I moved to Miami last month", and
"Account plan is Free" (superseding the plan) from "I switched to the Free plan"; it
answers "Miami." citing the Miami belief, and fails to answer validly a question that
says "fail on purpose".
"""

from __future__ import annotations

import io
import json
import os
import unittest
from datetime import date, datetime, timezone

import credo
from credo import Message, Transcript

NYC = "User lives in New York City"
MIAMI = "User lives in Miami"


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: this suite runs against a worker, from clients/clients_test.go")
    return value


class Session(unittest.TestCase):
    """A scope's story: New York in January, Miami since February."""

    client: credo.Client
    scope: str
    nyc: credo.Belief
    first: credo.Enqueued
    second: credo.Enqueued

    @classmethod
    def setUpClass(cls) -> None:
        cls.url, cls.key, cls.prefix = _env("CREDO_URL"), _env("CREDO_KEY"), _env("CREDO_SCOPE_PREFIX")
        cls.client = credo.Client(cls.url, cls.key, backoff=0.05)
        cls.scope = cls.prefix + "ana"
        c = cls.client
        cls.first = c.add_transcript(cls.scope, [
            {"role": "user", "content": "I live in New York City."},
            {"role": "assistant", "content": "Noted."},
        ], id="conv-0115", occurred_at="2026-01-15T10:00:00Z")
        applied = c.wait(cls.first, timeout=60)
        assert [e.state for e in applied] == ["applied"], applied
        cls.nyc = c.beliefs(cls.scope).beliefs[0]
        # Both kinds of record at once: a Transcript, and the first one again as a dict.
        cls.second = c.add_transcripts([
            Transcript(cls.scope, [Message("user", "I moved to Miami last month."), Message("assistant", "Welcome!")],
                       id="conv-0320", occurred_at=datetime(2026, 3, 20, 14, tzinfo=timezone.utc)),
            {"scope": cls.scope, "id": "conv-0115", "occurred_at": "2026-01-15T10:00:00Z",
             "messages": [{"role": "user", "content": "I live in New York City."},
                          {"role": "assistant", "content": "Noted."}]},
        ])
        c.wait(cls.second, timeout=60)

    def test_enqueued(self) -> None:
        self.assertEqual(1, self.first.enqueued)
        self.assertEqual(1, self.second.enqueued)
        self.assertEqual(1, self.second.duplicates)
        self.assertEqual(self.first.episode_ids[0], self.second.episode_ids[1], "a duplicate answers its episode's id")

    def test_episode(self) -> None:
        e = self.client.episode(self.second.episode_ids[0])
        self.assertEqual("applied", e.state)
        self.assertEqual("conv-0320", e.external_id)
        self.assertEqual(self.scope, e.scope)
        self.assertEqual(datetime(2026, 3, 20, 14, tzinfo=timezone.utc), e.occurred_at)
        self.assertIsNone(e.last_error)

    def test_current(self) -> None:
        got = self.client.beliefs(self.scope)
        self.assertEqual("current", got.mode)
        self.assertEqual([MIAMI], got.statements())
        miami = got.beliefs[0]
        self.assertEqual(datetime(2026, 2, 20, tzinfo=timezone.utc), miami.valid_from)
        self.assertIsNone(miami.valid_until)
        self.assertEqual([self.nyc.id], miami.supersedes)
        self.assertEqual([self.second.episode_ids[0]], miami.episodes)

    def test_history(self) -> None:
        got = self.client.beliefs(self.scope, history=True)
        self.assertEqual("history", got.mode)
        by = {b.statement: b for b in got.beliefs}
        self.assertEqual({NYC, MIAMI}, set(by))
        self.assertEqual("superseded", by[NYC].status)
        self.assertEqual(datetime(2026, 2, 20, tzinfo=timezone.utc), by[NYC].valid_until)
        chain = self.client.history(by[MIAMI].id)
        self.assertEqual([NYC, MIAMI], [b.statement for b in chain])

    def test_as_of(self) -> None:
        got = self.client.beliefs(self.scope, as_of=date(2026, 2, 1))
        self.assertEqual("as_of", got.mode)
        self.assertEqual([NYC], got.statements())

    def test_known_at(self) -> None:
        # What memory held when it learned of New York: New York, not yet Miami.
        got = self.client.beliefs(self.scope, known_at=self.nyc.recorded_at)
        self.assertEqual("known_at", got.mode)
        self.assertEqual([NYC], got.statements())

    def test_ranked(self) -> None:
        got = self.client.beliefs(self.scope, query="Where did the user live before?", k=5)
        self.assertTrue(got.ranked)
        self.assertTrue(got.auto_history, "a question about the past is answered from history")
        self.assertIn(NYC, got.statements())

    def test_events(self) -> None:
        events = self.client.events(self.scope)
        self.assertEqual(1, len(events))
        e = events[0]
        self.assertEqual(("supersede", "temporal", "extraction"), (e.action, e.reason, e.origin))
        self.assertEqual((NYC, MIAMI), (e.old_statement, e.new_statement))
        self.assertEqual(self.nyc.id, e.old_belief_id)
        self.assertEqual(1, len(self.client.events(self.scope, limit=1)))

    def test_context(self) -> None:
        now = self.client.context(self.scope, "Where does the user live?")
        self.assertEqual("current", now.mode)
        self.assertTrue(str(now).startswith(f"Memory of {self.scope} "), now.context)
        self.assertIn(f"- {MIAMI} (since 2026-02-20)", now.context)
        self.assertNotIn(NYC, now.context)
        before = self.client.context(self.scope, "Where did the user live before?", k=5, budget=2000)
        self.assertEqual("history", before.mode)
        self.assertIn("No longer true:", before.context)
        self.assertIn(f"- {NYC} (from 2026-01-15 until 2026-02-20)", before.context)
        then = self.client.context(self.scope, "Where does the user live?", as_of="2026-02-01")
        self.assertIn(NYC, then.context)
        self.assertNotIn(MIAMI, then.context)

    def test_ask(self) -> None:
        got = self.client.ask(self.scope, "Where does the user live?")
        self.assertEqual("Miami.", got.answer)
        self.assertEqual([MIAMI], [b.statement for b in got.cited])
        self.assertEqual([got.cited[0].id], got.citations)

    def test_ask_model_failure_is_retried_then_raised(self) -> None:
        c = credo.Client(self.url, self.key, max_retries=2, backoff=0.01)
        with self.assertLogs("credo", "INFO") as logs, self.assertRaises(credo.ServerError) as raised:
            c.ask(self.scope, "Where does the user live? (fail on purpose)")
        self.assertEqual(502, raised.exception.status)
        self.assertEqual("model_failed", raised.exception.code)
        self.assertEqual(2, sum("model_failed" in line for line in logs.output), logs.output)

    def test_review(self) -> None:
        c, scope = self.client, self.prefix + "plan"
        pro = c.assert_belief(scope, "Account plan is Pro", "plan", authoritative=True)
        self.assertEqual("accepted", pro.outcome)
        c.wait(c.add_transcript(scope, [{"role": "user", "content": "I switched to the Free plan."}]), timeout=60)
        # Extraction may not change an authoritative belief: refused, and queued.
        self.assertEqual(["Account plan is Pro"], c.beliefs(scope).statements())
        [item] = c.conflicts(scope)
        self.assertEqual(("refused", "entrenchment", "open"), (item.kind, item.cause, item.status))
        self.assertEqual("Account plan is Free", item.statement)
        self.assertEqual(pro.belief_id, item.target_id)
        decided = c.resolve(item.id, "apply", note="confirmed by mail")
        self.assertEqual("applied", decided.conflict.resolution)
        self.assertEqual("confirmed by mail", decided.conflict.note)
        assert decided.revision is not None
        self.assertEqual("superseded", decided.revision.outcome)
        self.assertEqual(["Account plan is Free"], c.beliefs(scope).statements())
        self.assertEqual([], c.conflicts(scope))
        self.assertEqual(["resolved"], [x.status for x in c.conflicts(scope, all=True)])
        with self.assertRaises(credo.Refused) as again:
            c.resolve(item.id, "dismiss")
        self.assertEqual("refused", again.exception.code)
        self.assertIn("already resolved", again.exception.message)

    def test_revert_and_audit(self) -> None:
        c, trip = self.client, self.prefix + "trip/"
        a, b = trip + "a", trip + "b"
        # The session's story in two scopes: New York, then Miami superseding it.
        for said, at in (("I live in New York City.", "2026-01-15T10:00:00Z"),
                         ("I moved to Miami last month.", "2026-03-20T14:00:00Z")):
            c.wait(c.add_transcripts([Transcript(s, [Message("user", said)], occurred_at=at) for s in (a, b)]),
                   timeout=60)
        [moved] = c.events(a)
        self.assertEqual(("supersede", "extraction", NYC, MIAMI),
                         (moved.action, moved.origin, moved.old_statement, moved.new_statement))
        self.assertEqual((None, None, None), (moved.reverts, moved.reverted_by, moved.reverted_at))
        # In b, an operator corrects Miami: that supersede is no longer the latest of its chain.
        [moved_b] = c.events(b)
        boston = c.correct(moved_b.new_belief_id or 0, "User lives in Boston")
        self.assertEqual(("superseded", moved_b.new_belief_id), (boston.outcome, boston.target_id))
        corrected = c.events(b)[0]

        # She was only visiting: the operator reverts the supersede of a.
        got = c.revert(moved.id, note="She was only visiting Miami.")
        self.assertEqual(("revert", "operator", moved.id), (got.revert.action, got.revert.origin, got.revert.reverts))
        self.assertEqual("She was only visiting Miami.", got.revert.excerpt)
        self.assertEqual((moved.id, got.revert.id), (got.event.id, got.event.reverted_by))
        self.assertIsNotNone(got.event.reverted_at)
        self.assertEqual(([moved.old_belief_id], [moved.new_belief_id], None),
                         (got.restored, got.retracted, got.unreinforced))
        # New York is current again, as it was; Miami is retracted as never true.
        now = c.beliefs(a)
        self.assertEqual([NYC], now.statements())
        self.assertEqual((moved.old_belief_id, "active", None),
                         (now.beliefs[0].id, now.beliefs[0].status, now.beliefs[0].valid_until))
        self.assertEqual({NYC: "active", MIAMI: "retracted"},
                         {x.statement: x.status for x in c.beliefs(a, history=True).beliefs})
        # The events, newest first: the revert, and the supersede it undid.
        revert, reverted = c.events(a)
        self.assertEqual((got.revert.id, "revert", moved.id), (revert.id, revert.action, revert.reverts))
        self.assertEqual((moved.id, got.revert.id, got.event.reverted_at),
                         (reverted.id, reverted.reverted_by, reverted.reverted_at))

        # Refused, and nothing changes: an event reverted already, and one a later revision built on.
        with self.assertRaises(credo.Refused) as again:
            c.revert(moved.id)
        self.assertEqual((409, "refused"), (again.exception.status, again.exception.code))
        self.assertIn(f"reverted already, by event {got.revert.id}", again.exception.message)
        with self.assertRaises(credo.Refused) as built_on:
            c.revert(moved_b.id, note="too late")
        self.assertEqual((409, "refused"), (built_on.exception.status, built_on.exception.code))
        self.assertIn(f"revert event {corrected.id} first", built_on.exception.message)
        self.assertEqual(["User lives in Boston"], c.beliefs(b).statements())
        self.assertEqual(2, len(c.events(b)))

        # The audit: extraction's supersede of a was reverted; b's stands, corrected by the operator.
        audit = c.audit(a)
        self.assertEqual((a, None, None), (audit.scope, audit.scope_prefix, audit.since))
        self.assertEqual(
            [credo.AuditRevisions("extraction", "supersede", "temporal", applied=1, reverted=1, corrected=0)],
            audit.revisions)
        self.assertEqual([credo.AuditOrigin("extraction", applied=1, reverted=1, corrected=0, precision=0.0)],
                         audit.origins)
        self.assertEqual((1, []), (audit.reverts, audit.refusals))
        both = c.audit(scope_prefix=trip)
        self.assertEqual((None, trip), (both.scope, both.scope_prefix))
        self.assertEqual([("extraction", 2, 1, 1, 0.5), ("operator", 1, 0, 0, 1.0)],
                         [(o.origin, o.applied, o.reverted, o.corrected, o.precision) for o in both.origins])
        self.assertEqual(1, both.reverts)
        # Since the revert: the revert alone.
        since = c.audit(scope_prefix=trip, since=got.revert.created_at)
        self.assertEqual(got.revert.created_at, since.since)
        self.assertEqual(([], [], 1), (since.revisions, since.origins, since.reverts))

    def test_correct_and_forget(self) -> None:
        c, scope = self.client, self.prefix + "music"
        cello = c.assert_belief(scope, "User plays the cello", "instrument")
        viola = c.correct(cello.belief_id or 0, "User plays the viola")
        self.assertEqual(("superseded", cello.belief_id), (viola.outcome, viola.target_id))
        forgotten = c.forget(scope, match="viola")
        self.assertEqual([viola.belief_id], forgotten.forgotten)
        self.assertEqual([], c.beliefs(scope).statements())
        purged = c.forget(scope, all=True, purge=True)
        assert purged.purged is not None
        self.assertEqual("scope", purged.purged.what)
        self.assertGreaterEqual(purged.purged.counts["belief"], 2)

    def test_entities(self) -> None:
        c, scope = self.client, self.prefix + "family"
        austin = c.assert_belief(scope, "User's sister lives in Austin", "home_city", subject="user's sister")
        c.assert_belief(scope, "Sarah plays the cello", "instrument", subject="Sarah")
        c.assert_belief(scope, "User lives in Boston", "home_city")
        denver = c.correct(austin.belief_id or 0, "User's sister lives in Denver", reason="temporal")
        self.assertEqual("superseded", denver.outcome)
        self.assertEqual({"User's sister lives in Denver": "sister", "Sarah plays the cello": "sarah",
                          "User lives in Boston": "user"}, {b.statement: b.entity for b in c.beliefs(scope).beliefs})

        entities = c.list_entities(scope)
        self.assertEqual(["user", "sarah", "sister"], [e.key for e in entities], "the user first, then by name")
        sister = entities[2]
        self.assertEqual((scope, "sister", "person", [], 1), (sister.scope, sister.name, sister.kind, sister.aliases,
                                                              sister.current_beliefs))
        # Found by any way of naming her; the slot's chain with history.
        view = c.get_entity(scope, "my sister", history=True)
        self.assertIsInstance(view, credo.EntityView)
        self.assertEqual("sister", view.key)
        [slot] = view.slots
        self.assertEqual("home_city", slot.attribute)
        self.assertEqual(["User's sister lives in Denver"], [b.statement for b in slot.current])
        self.assertEqual(["User's sister lives in Austin", "User's sister lives in Denver"],
                         [b.statement for b in slot.history])
        self.assertEqual([], c.get_entity(scope, "User's Sister").slots[0].history)
        with self.assertRaises(credo.NotFound) as raised:
            c.get_entity(scope, "Sarahh")
        self.assertEqual("not_found", raised.exception.code)
        self.assertIn('did you mean "Sarah"?', raised.exception.message)

        # Sarah is the sister: her name and belief move, nothing else changes.
        merged = c.merge_entities(scope, "my sister", "Sarah", note="Sarah is her name")
        self.assertEqual(("sister", ["Sarah"], 1, []),
                         (merged.entity.key, merged.entity.aliases, merged.moved, merged.closed_items))
        self.assertEqual(["home_city", "instrument"], sorted(s.attribute for s in merged.entity.slots))
        self.assertEqual("sister", c.get_entity(scope, "sarah").key)
        self.assertEqual(["user", "sister"], [e.key for e in c.list_entities(scope)])
        with self.assertRaises(credo.InvalidRequest):
            c.merge_entities(scope, "sister", "Sarah")

        # Forget everything about her.
        forgotten = c.forget(scope, entity="Sarah")
        self.assertEqual(3, len(forgotten.forgotten or []))
        self.assertEqual(["User lives in Boston"], c.beliefs(scope).statements())

    def test_export_and_import(self) -> None:
        c, scope, moved = self.client, self.prefix + "moving", self.prefix + "moved"
        cello = c.assert_belief(scope, "User plays the cello", "instrument")
        c.correct(cello.belief_id or 0, "User plays the viola")
        records = list(c.export(scope))
        self.assertEqual("credo-export", records[0]["format"])
        self.assertEqual([scope], records[0]["scopes"])
        self.assertEqual("end", records[-1]["type"])
        self.assertEqual(2, sum(1 for r in records if r.get("type") == "belief"))
        data = "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")
        got = c.import_file(data, scope_map={scope: moved})
        self.assertEqual([(moved, scope, 2, 1)], [(s.scope, s.exported_as, s.beliefs, s.events) for s in got.scopes])
        self.assertEqual(c.beliefs(scope, history=True).statements(), c.beliefs(moved, history=True).statements())
        with self.assertRaises(credo.Refused) as raised:
            c.import_file(io.BytesIO(data), scope_map={scope: moved})
        self.assertIn("already holds memory", raised.exception.message)
        with self.assertRaises(credo.InvalidRequest) as raised:
            c.import_file(data.replace(b'"status": "active"', b'"status": "dreamt"'), scope_map={scope: self.prefix + "x"})
        self.assertIn("line ", raised.exception.message)

    def test_changes(self) -> None:
        c = self.client
        page = c.changes(self.scope)
        applied = [ch for ch in page.changes if ch.type == "revision.applied"]
        self.assertEqual(1, len(applied))
        self.assertEqual((self.scope, MIAMI), (applied[0].scope, applied[0].data["new_statement"]))
        again = c.changes(self.scope, after=page.cursor, wait=0)
        self.assertEqual([], again.changes)
        first, cursor = next(c.iter_changes(scope_prefix=self.scope, wait=0))
        self.assertEqual(page.changes[0], first)
        with self.assertRaises(credo.InvalidRequest):
            c.changes(self.scope, after="not a cursor")

    def test_webhook(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, HTTPServer

        got = []

        class Receiver(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                got.append((dict(self.headers), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        srv = HTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.shutdown)
        c = self.client
        made = c.create_webhook(f"http://127.0.0.1:{srv.server_port}/hook", self.prefix + "hooks/",
                                events=["revision.applied"])
        self.assertTrue(made.secret.startswith("whsec_"))
        self.assertIn(made.id, [w.id for w in c.webhooks()])
        self.assertEqual((204, True), (c.test_webhook(made.id).status, c.test_webhook(made.id).ok))
        headers, body = got[0]
        self.assertEqual("webhook.test", credo.verify_webhook(made.secret, headers, body)["type"])
        with self.assertRaises(credo.WebhookVerificationError):
            credo.verify_webhook(made.secret, headers, body + b" ")
        with self.assertRaises(credo.WebhookVerificationError):
            credo.verify_webhook(made.secret, headers, body, now=0)
        rotated = c.rotate_webhook_secret(made.id)
        self.assertNotEqual(made.secret, rotated.secret)
        updated = c.update_webhook(made.id, url=f"http://127.0.0.1:{srv.server_port}/v2", events=[])
        self.assertEqual(([], True), (updated.events, updated.url.endswith("/v2")))
        self.assertFalse(c.enable_webhook(made.id).disabled)
        self.assertEqual([], c.webhook_deliveries(made.id, state="failed"))
        self.assertEqual(0, c.resend_webhook(made.id, all=True))
        with self.assertRaises(credo.NotFound):
            c.resend_webhook(made.id, message_id="msg_9")
        self.assertEqual(made.id, c.delete_webhook(made.id).id)
        with self.assertRaises(credo.NotFound):
            c.delete_webhook(made.id)

    def test_policy(self) -> None:
        c, org = self.client, self.prefix + "org/"
        set_ = c.set_policy(org, instructions="Keep product facts.",
                            redact_patterns=[credo.PolicyPattern("employee_id", "EMP-[0-9]{6}")])
        self.assertEqual((org, None, [credo.PolicyPattern("employee_id", "EMP-[0-9]{6}")]),
                         (set_.scope_prefix, set_.redact, set_.redact_patterns))
        self.assertEqual([org], [p.scope_prefix for p in c.policies(org + "user:1")])
        self.assertIn(org, [p.scope_prefix for p in c.policies()])
        got = c.add_transcript(org + "user:1", [{"role": "user", "content": "I am EMP-123456, card 4111 1111 1111 1111."}])
        self.assertEqual({"card": 1, "pattern:employee_id": 1}, got.redacted)
        self.assertEqual("Keep product facts.", c.unset_policy(org).instructions)
        with self.assertRaises(credo.NotFound):
            c.unset_policy(org)
        with self.assertRaises(credo.InvalidRequest):
            c.set_policy(org, redact=["ssn"])

    def test_unauthorized(self) -> None:
        with self.assertRaises(credo.Unauthorized) as raised:
            credo.Client(self.url, "credo_000000000000_wrong").beliefs(self.scope)
        self.assertEqual((401, "unauthorized"), (raised.exception.status, raised.exception.code))

    def test_forbidden(self) -> None:
        with self.assertRaises(credo.Forbidden) as raised:
            self.client.beliefs("elsewhere/" + self.scope)
        self.assertEqual("forbidden", raised.exception.code)

    def test_not_found(self) -> None:
        with self.assertRaises(credo.NotFound) as raised:
            self.client.episode(10**15)
        self.assertEqual((404, "not_found"), (raised.exception.status, raised.exception.code))
        self.assertIn("not found", raised.exception.message)
        with self.assertRaises(credo.NotFound):
            self.client.history(10**15)

    def test_invalid(self) -> None:
        with self.assertRaises(credo.InvalidRequest) as raised:
            self.client.beliefs(self.scope, k=0)
        self.assertEqual("invalid_request", raised.exception.code)
        with self.assertRaises(credo.InvalidRequest) as raised:
            self.client.add_transcript(self.scope, [{"role": "robot", "content": "beep"}])
        self.assertIn("robot", raised.exception.message)
        with self.assertRaises(ValueError):
            self.client.beliefs(self.scope, as_of=datetime(2026, 2, 1))  # no timezone: not guessed

    def test_rate_limited_then_retried(self) -> None:
        limited = _env("CREDO_LIMITED_URL")
        # Without retries, the limit shows: one request every 2 s, so one of a few in a
        # row is refused.
        hasty = credo.Client(limited, self.key, max_retries=0)
        refused = None
        for _ in range(5):
            try:
                hasty.beliefs(self.scope)
            except credo.RateLimited as e:
                refused = e
                break
        self.assertIsNotNone(refused, "five requests in a row, none refused")
        assert refused is not None
        self.assertEqual((429, "rate_limited"), (refused.status, refused.code))
        assert refused.retry_after is not None
        self.assertGreaterEqual(refused.retry_after, 1)
        # With retries, every call succeeds: the refused ones after their Retry-After.
        patient = credo.Client(limited, self.key, max_retries=3)
        with self.assertLogs("credo", "INFO") as logs:
            for _ in range(3):
                self.assertEqual([MIAMI], patient.beliefs(self.scope).statements())
        self.assertTrue(any("rate_limited" in line for line in logs.output), logs.output)


if __name__ == "__main__":
    unittest.main()
