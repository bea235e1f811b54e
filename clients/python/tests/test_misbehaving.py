"""A server that misbehaves: every failure is one of the client's errors, and a call
ends within its timeout whatever the server does. The assertions are on errors and on
what the server received; where time matters, the server is made slower than the
client's timeout by a wide margin, so that the old behaviour (waiting it out, or
getting the answer late) fails the test whatever the machine's speed."""

from __future__ import annotations

import json
import unittest
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, List, Tuple

import credo
from credo.errors import retry_after_seconds

from .server import Server, drip, error_answer, json_answer, send

EPISODE = {"id": 1, "scope": "user:1", "external_id": None, "state": "applied", "attempts": 1, "last_error": None,
           "occurred_at": "2026-03-20T14:00:00Z", "received_at": "2026-03-20T14:00:01Z",
           "processed_at": "2026-03-20T14:00:02Z", "redacted_at": None}


def every_operation(c: credo.Client) -> List[Tuple[str, Callable[[], Any]]]:
    return [
        ("enqueueTranscripts", lambda: c.add_transcript("user:1", [{"role": "user", "content": "hi"}])),
        ("getEpisode", lambda: c.episode(1)),
        ("wait", lambda: c.wait(1, timeout=5)),
        ("listBeliefs", lambda: c.beliefs("user:1")),
        ("beliefHistory", lambda: c.history(1)),
        ("listEvents", lambda: c.events("user:1")),
        ("audit", lambda: c.audit("user:1")),
        ("getContext", lambda: c.context("user:1", "where?")),
        ("ask", lambda: c.ask("user:1", "where?")),
        ("listConflicts", lambda: c.conflicts("user:1")),
        ("resolveConflict", lambda: c.resolve(1, "apply")),
        ("assertBelief", lambda: c.assert_belief("user:1", "User is tall", "height")),
        ("correctBelief", lambda: c.correct(1, "User is short")),
        ("revertEvent", lambda: c.revert(1)),
        ("forget", lambda: c.forget("user:1", all=True)),
        ("setPolicy", lambda: c.set_policy("user:")),
        ("getPolicies", lambda: c.policies()),
        ("unsetPolicy", lambda: c.unset_policy("user:")),
    ]


class RetryAfter(unittest.TestCase):
    def test_beyond_the_deadline_is_raised_at_once(self) -> None:
        # The old client slept 28 hours here.
        for value in ("100000", format_datetime(datetime.now(timezone.utc) + timedelta(days=1), usegmt=True)):
            with self.subTest(value):
                s = Server.start(self, error_answer(429, "rate_limited", (("Retry-After", value),)))
                with self.assertRaises(credo.RateLimited) as raised:
                    credo.Client(s.url, "k", timeout=5, max_retries=3).episode(1)
                self.assertGreater(raised.exception.retry_after, 5, "the caller learns how long to wait")
                self.assertEqual(1, len(s.requests), "no retry: its wait would end past the timeout")

    def test_not_a_time_falls_back_to_backoff(self) -> None:
        # "inf" raised OverflowError from time.sleep.
        for value in ("inf", "Infinity", "nan", "-1", "1e3", "0x10", "soon", "", "9" * 400):
            with self.subTest(value):
                s = Server.start(self, error_answer(429, "rate_limited", (("Retry-After", value),)))
                with self.assertRaises(credo.RateLimited) as raised:
                    credo.Client(s.url, "k", max_retries=1, backoff=0.001).episode(1)
                self.assertIsNone(raised.exception.retry_after)
                self.assertEqual(2, len(s.requests), "retried after the backoff")

    def test_seconds_and_dates(self) -> None:
        now = datetime(2026, 3, 20, 14, tzinfo=timezone.utc)
        self.assertEqual(120.0, retry_after_seconds(" 120 ", now))
        self.assertEqual(1.5, retry_after_seconds("1.5", now))
        self.assertEqual(90.0, retry_after_seconds("Fri, 20 Mar 2026 14:01:30 GMT", now))
        self.assertEqual(0.0, retry_after_seconds("Fri, 20 Mar 2026 13:00:00 GMT", now), "a date past: now")
        self.assertIsNone(retry_after_seconds("٣", now), "ASCII digits only")
        self.assertIsNone(retry_after_seconds(None, now))


class Deadline(unittest.TestCase):
    def test_a_body_dripped_slowly(self) -> None:
        # Each byte comes well within any per-read timeout; the whole answer (over 200
        # bytes) takes over 10 s. The old client, whose timeout was per read, returned it.
        body = json.dumps(EPISODE).encode()
        s = Server.start(self, lambda h: (h.send_response(200), h.send_header("Content-Length", str(len(body))),
                                          h.end_headers(), drip(h, body, 0.05)))
        with self.assertRaises(credo.Timeout):
            credo.Client(s.url, "k", timeout=0.5, max_retries=3, backoff=0.001).episode(1)
        self.assertEqual(1, len(s.requests), "the timeout is the whole call's: no time is left to try again")

    def test_headers_dripped_slowly(self) -> None:
        body = json.dumps(EPISODE).encode()
        head = (f"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nX-Pad: {'x' * 40}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        s = Server.start(self, lambda h: (drip(h, head, 0.05), h.wfile.write(body)))
        with self.assertRaises(credo.Timeout):
            credo.Client(s.url, "k", timeout=0.5).episode(1)

    def test_retries_and_their_waits_within_the_timeout(self) -> None:
        s = Server.start(self, error_answer(503, "api_disabled"))
        # The server's error; or, on a machine slow enough that a retry is still waiting for
        # its answer when the deadline passes, the timeout. Either way within the deadline.
        with self.assertRaises((credo.ServerError, credo.Timeout)):
            credo.Client(s.url, "k", timeout=1, max_retries=10, backoff=0.4).beliefs("user:1")
        # The shortest waits of three retries add up to 0.2 + 0.4 + 0.8 s: past 1 s.
        self.assertLessEqual(len(s.requests), 3 + 1, "the old client tried 11 times over 5 minutes")
        self.assertGreaterEqual(len(s.requests), 1)


class CutShort(unittest.TestCase):
    def test_a_truncated_body(self) -> None:
        # Content-Length says 100; 10 bytes come, then the connection closes.
        s = Server.start(self, lambda h: (h.send_response(200), h.send_header("Content-Length", "100"),
                                          h.end_headers(), h.wfile.write(b'{"id": 1, ')))
        c = credo.Client(s.url, "k", max_retries=2, backoff=0.001)
        with self.assertRaises(credo.TransportError) as raised:
            c.episode(1)
        self.assertNotIsInstance(raised.exception, credo.Timeout)
        self.assertIn("cut short", str(raised.exception))
        self.assertEqual(3, len(s.requests), "a GET cut short is tried again")
        with self.assertRaises(credo.TransportError):
            c.assert_belief("user:1", "User is tall", "height")
        self.assertEqual(4, len(s.requests), "an operator's change is not sent twice")

    def test_closed_without_an_answer(self) -> None:
        s = Server.start(self, lambda h: None)
        with self.assertRaises(credo.TransportError) as raised:
            credo.Client(s.url, "k", max_retries=1, backoff=0.001).episode(1)
        self.assertNotIsInstance(raised.exception, credo.Timeout)
        self.assertEqual(2, len(s.requests))


class NotTheAnswer(unittest.TestCase):
    def test_not_json(self) -> None:
        page = b"<!doctype html><html><body>Sign in to the Wi-Fi</body></html>"
        for body, content_type in ((page, "text/html"), (b"", "application/json"), (b"\xff\xfe{", "application/json"),
                                   (b"[" * 100000, "application/json"), (b'{"id": 1', "application/json")):
            with self.subTest(body[:20]):
                s = Server.start(self, lambda h: send(h, 200, body, content_type=content_type))
                with self.assertRaises(credo.InvalidResponse) as raised:
                    credo.Client(s.url, "k", max_retries=3, backoff=0.001).episode(1)
                self.assertEqual(200, raised.exception.status)
                self.assertIn(f"({content_type}) is not JSON", str(raised.exception))
                self.assertEqual(1, len(s.requests), "not retried: it would answer the same")

    def test_every_operation_checks_its_answer(self) -> None:
        for body in ({"unexpected": True}, [], "a string", None, 7):
            s = Server.start(self, json_answer(200, body))
            for op, call in every_operation(credo.Client(s.url, "k", max_retries=0)):
                with self.subTest(op=op, body=body):
                    with self.assertRaises(credo.InvalidResponse) as raised:
                        call()
                    self.assertEqual(200, raised.exception.status)

    def test_fields_of_the_wrong_type(self) -> None:
        belief = {"id": 1, "scope": "user:1", "subject": "user", "attribute": "location", "kind": "attribute",
                  "statement": "User lives in Miami", "status": "active", "confidence": 0.9, "origin": "user_stated",
                  "valid_from": "2026-02-20T00:00:00Z", "valid_until": None, "recorded_at": "2026-03-20T14:00:00Z",
                  "retired_at": None, "supersedes": None, "superseded_by": None, "episode_id": 1,
                  "quote": "I moved to Miami", "reinforced_count": 0, "last_seen_at": "2026-03-20T14:00:00Z",
                  "depends_on": None, "needs_review": False, "episodes": [1]}
        beliefs = {"mode": "current", "auto_history": False, "ranked": False}
        cases = [
            (lambda c: c.episode(1), dict(EPISODE, id="1"), "id: expected an integer, got a string"),
            (lambda c: c.episode(1), dict(EPISODE, attempts=True), "attempts: expected an integer, got a boolean"),
            (lambda c: c.episode(1), dict(EPISODE, occurred_at="yesterday"), "occurred_at: expected an RFC 3339 time"),
            (lambda c: c.episode(1), {"id": 1, "scope": "user:1"}, "state is missing"),
            (lambda c: c.beliefs("user:1"), dict(beliefs, beliefs=5), "beliefs: expected an array, got a number"),
            (lambda c: c.beliefs("user:1"), dict(beliefs, beliefs=[belief, 5]), "beliefs[1]: expected an object"),
            (lambda c: c.beliefs("user:1"), dict(beliefs, beliefs=[dict(belief, supersedes=["2"])]),
             "beliefs[0].supersedes[0]: expected an integer"),
            (lambda c: c.beliefs("user:1"), dict(beliefs, beliefs=[dict(belief, confidence="high")]),
             "beliefs[0].confidence: expected a number"),
            (lambda c: c.history(1), {"beliefs": [dict(belief, statement=None)]},
             "beliefs[0].statement: expected a string, got null"),
            (lambda c: c.forget("user:1", all=True), {"purged": {"what": "scope", "counts": {"belief": "4"}}},
             "purged.counts.belief: expected an integer"),
        ]
        for call, body, problem in cases:
            with self.subTest(problem):
                s = Server.start(self, json_answer(200, body))
                with self.assertRaises(credo.InvalidResponse) as raised:
                    call(credo.Client(s.url, "k", max_retries=0))
                self.assertIn(problem, str(raised.exception))

    def test_error_answers_of_another_shape(self) -> None:
        for body, code, message, details in (
                (b'{"error": {"code": "invalid_request", "message": "bad", "details": 5}}', "invalid_request", "bad", []),
                (b'{"error": {"code": "invalid_request", "message": "bad", "details": [1]}}', "invalid_request", "bad",
                 ["1"]),
                (b'{"error": ["invalid_request"]}', "http_400", '{"error": ["invalid_request"]}', []),
                (b'{"error": "invalid_request"}', "http_400", '{"error": "invalid_request"}', []),
                (b"[" * 100000, "http_400", "[" * 200, []),
                (b"\xff", "http_400", "\ufffd", [])):
            with self.subTest(body[:40]):
                s = Server.start(self, lambda h: send(h, 400, body))
                with self.assertRaises(credo.InvalidRequest) as raised:
                    credo.Client(s.url, "k").episode(1)
                e = raised.exception
                self.assertEqual((400, code, message, details), (e.status, e.code, e.message, e.details))

    def test_what_a_newer_server_adds_is_ignored(self) -> None:
        s = Server.start(self, json_answer(200, dict(EPISODE, new_field={"x": [1]})))
        self.assertEqual("applied", credo.Client(s.url, "k").episode(1).state)


if __name__ == "__main__":
    unittest.main()


class Redirects(unittest.TestCase):
    """No redirect is followed: the old client sent the key to the host a 301 named,
    turned a POST into a GET, and reported that host's 404 as NotFound."""

    def other_host(self) -> Tuple[Server, List[str]]:
        """A server of another origin that records the Authorization header of each
        request, and answers 404 as that host would."""
        keys: List[str] = []

        def answer(h: BaseHTTPRequestHandler) -> None:
            keys.append(h.headers.get("Authorization") or "")
            error_answer(404, "not_found")(h)
        return Server.start(self, answer), keys

    def test_to_another_host(self) -> None:
        other, keys = self.other_host()
        for status in (301, 302, 303, 307, 308):
            for name, call in (("GET", lambda c: c.beliefs("user:1")),
                               ("POST", lambda c: c.assert_belief("user:1", "User is tall", "height")),
                               ("export", lambda c: list(c.export("user:1")))):
                with self.subTest(status=status, call=name):
                    s = Server.start(self, lambda h, status=status: send(
                        h, status, b"", (("Location", other.url + "/v1/beliefs"),)))
                    with self.assertRaises(credo.Redirected) as raised:
                        call(credo.Client(s.url, "credo_secret", max_retries=3, backoff=0.001))
                    self.assertEqual(status, raised.exception.status)
                    self.assertEqual(other.url + "/v1/beliefs", raised.exception.location)
                    self.assertIn(other.url, str(raised.exception))
                    self.assertNotIsInstance(raised.exception, credo.APIError)
                    self.assertEqual(1, len(s.requests), "not retried")
        self.assertEqual([], other.requests, "the other host got no request")
        self.assertEqual([], keys, "nor the key")

    def test_to_the_same_host(self) -> None:
        # The API never redirects: a redirect is a proxy's or a wrong URL's, said at once.
        s = Server.start(self, lambda h: send(h, 308, b"", (("Location", "/api/v1/beliefs"),)))
        with self.assertRaises(credo.Redirected) as raised:
            credo.Client(s.url, "k").assert_belief("user:1", "User is tall", "height")
        self.assertEqual("/api/v1/beliefs", raised.exception.location)
        self.assertEqual(["POST /v1/beliefs"], s.requests)
