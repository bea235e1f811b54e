"""What a real worker cannot be made to do on demand: answer 5xx to anything, hang,
refuse connections. Small local servers stand in for it; they count what they receive,
so the retry policy is checked by counts, not by timing."""

from __future__ import annotations

import ast
import pathlib
import socket
import unittest
from datetime import datetime, timezone
from typing import Tuple

import credo
from credo import Message, Transcript
from credo.types import parse_time, transcript_json

from .server import Server, error_answer, json_answer, send


class Webhooks(unittest.TestCase):
    def test_standard_webhooks_vector(self) -> None:
        headers = {"Webhook-Id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "Webhook-Timestamp": "1614265330",
                   "Webhook-Signature": "v1,bad v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}
        body = b'{"test": 2432232314}'
        secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        self.assertEqual({"test": 2432232314}, credo.verify_webhook(secret, headers, body, now=1614265330))
        with self.assertRaises(credo.WebhookVerificationError):
            credo.verify_webhook(secret, headers, body, now=1614265330 + 301)
        with self.assertRaises(credo.WebhookVerificationError):
            credo.verify_webhook("whsec_" + "A" * 44, headers, body, now=1614265330)


class Retries(unittest.TestCase):
    def stub(self, status: int, code: str, *headers: Tuple[str, str]) -> Server:
        return Server.start(self, error_answer(status, code, headers))

    def test_5xx_retried_when_safe_bounded(self) -> None:
        s = self.stub(503, "api_disabled")
        c = credo.Client(s.url, "k", max_retries=2, backoff=0.001)
        with self.assertRaises(credo.ServerError) as raised:
            c.beliefs("user:1")
        self.assertEqual((503, "api_disabled"), (raised.exception.status, raised.exception.code))
        self.assertEqual(3, len(s.requests), "the first try and two retries")
        with self.assertRaises(credo.ServerError):
            c.add_transcript("user:1", [{"role": "user", "content": "hi"}])
        self.assertEqual(6, len(s.requests), "transcripts are deduplicated: safe to send again")

    def test_5xx_not_retried_when_unsafe(self) -> None:
        s = self.stub(500, "internal")
        c = credo.Client(s.url, "k", max_retries=3, backoff=0.001)
        for call in (lambda: c.assert_belief("user:1", "User is tall", "height"),
                     lambda: c.correct(1, "User is short"),
                     lambda: c.resolve(1, "apply"),
                     lambda: c.forget("user:1", all=True),
                     lambda: c.revert(1, note="wrong")):
            with self.assertRaises(credo.ServerError):
                call()
        self.assertEqual(["POST /v1/beliefs", "POST /v1/beliefs/1/correct", "POST /v1/conflicts/1/resolve",
                          "POST /v1/forget", "POST /v1/events/1/revert"], s.requests)

    def test_429_retried_after_retry_after_for_any_call(self) -> None:
        s = self.stub(429, "rate_limited", ("Retry-After", "0"))
        c = credo.Client(s.url, "k", max_retries=1, backoff=0.001)
        with self.assertRaises(credo.RateLimited) as raised:
            c.resolve(1, "apply")
        self.assertEqual(0, raised.exception.retry_after)
        self.assertEqual(2, len(s.requests), "refused before anything was done: safe to send again")

    def test_4xx_not_retried(self) -> None:
        s = self.stub(404, "not_found")
        with self.assertRaises(credo.NotFound):
            credo.Client(s.url, "k", max_retries=3, backoff=0.001).episode(1)
        self.assertEqual(1, len(s.requests))

    def test_not_the_api(self) -> None:
        s = Server.start(self, lambda h: send(h, 502, b"oops!", content_type="text/plain"))
        with self.assertRaises(credo.ServerError) as raised:
            credo.Client(s.url, "k", max_retries=0).episode(1)
        self.assertEqual(("http_502", "oops!"), (raised.exception.code, raised.exception.message))


class Wait(unittest.TestCase):
    def test_timeout_says_why(self) -> None:
        # The worker tried twice and the model server was down: a wait that times out
        # says so, not only which episodes are pending.
        s = Server.start(self, lambda h: json_answer(200, {
            "id": int(h.path.split("?")[0].rsplit("/", 1)[1]), "scope": "user:1", "state": "pending",
            "attempts": 0 if h.path.startswith("/v1/episodes/8") else 2,
            "last_error": None if h.path.startswith("/v1/episodes/8") else "chat: connection refused"})(h))
        with self.assertRaises(credo.Timeout) as raised:
            credo.Client(s.url, "k").wait([7, 8], timeout=1, poll=0.05)
        self.assertIn("episodes [7, 8] still pending after 1 s", str(raised.exception))
        self.assertIn("7: 2 attempts, last error: chat: connection refused", str(raised.exception))
        self.assertIn("8: not tried yet", str(raised.exception))


class Transport(unittest.TestCase):
    def test_timeout(self) -> None:
        # A server that accepts connections and never answers.
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        self.addCleanup(listener.close)
        url = "http://127.0.0.1:%d" % listener.getsockname()[1]
        with self.assertRaises(credo.Timeout):
            credo.Client(url, "k", timeout=0.2, max_retries=3, backoff=0.001).episode(1)
        listener.setblocking(False)
        accepted = 0
        while True:
            try:
                conn, _ = listener.accept()
            except BlockingIOError:
                break
            accepted += 1
            conn.close()
        self.assertEqual(1, accepted, "the timeout is the whole call's: no time is left to try again")

    def test_refused(self) -> None:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        with self.assertRaises(credo.TransportError) as raised:
            credo.Client(f"http://127.0.0.1:{port}", "k", max_retries=0).episode(1)
        self.assertNotIsInstance(raised.exception, credo.Timeout)


class Settings(unittest.TestCase):
    def test_a_url_that_is_not_http_is_refused_at_once(self) -> None:
        for url in ("127.0.0.1:9464", "ftp://127.0.0.1", "localhost", "http://"):
            with self.subTest(url), self.assertRaises(ValueError):
                credo.Client(url, "k")
        self.assertEqual("https://memory.example/base", credo.Client("https://memory.example/base/", "k").url)

    def test_timeout_must_be_positive(self) -> None:
        for timeout in (0, -1, float("nan")):
            with self.subTest(timeout), self.assertRaises(ValueError):
                credo.Client("http://127.0.0.1:9464", "k", timeout=timeout)


class Package(unittest.TestCase):
    def test_python_3_9_syntax(self) -> None:
        root = pathlib.Path(credo.__file__).parent
        for path in sorted(root.glob("*.py")) + sorted((root.parent / "examples").glob("*.py")):
            ast.parse(path.read_text(), str(path), feature_version=(3, 9))

    def test_typed(self) -> None:
        self.assertTrue((pathlib.Path(credo.__file__).parent / "py.typed").exists())

    def test_transcripts_as_the_api_takes_them(self) -> None:
        at = datetime(2026, 3, 20, 14, tzinfo=timezone.utc)
        want = {"scope": "user:1", "occurred_at": "2026-03-20T14:00:00+00:00",
                "messages": [{"role": "user", "content": "hi", "at": "2026-03-20T14:00:00+00:00"}]}
        self.assertEqual(want, transcript_json(Transcript("user:1", [Message("user", "hi", at=at)], occurred_at=at)))
        self.assertEqual(want, transcript_json({"scope": "user:1", "occurred_at": at,
                                                "messages": [{"role": "user", "content": "hi", "at": at}]}))
        with self.assertRaises(ValueError):
            transcript_json({"scope": "user:1", "occurred_at": datetime(2026, 3, 20), "messages": []})

    def test_times(self) -> None:
        t = parse_time("2026-03-20T14:00:00.123456789Z")
        assert t is not None
        self.assertEqual((2026, 123456, 0.0), (t.year, t.microsecond, t.utcoffset().total_seconds()))
        t = parse_time("2026-03-20T14:00:00.5+02:00")
        assert t is not None
        self.assertEqual((500000, 7200.0), (t.microsecond, t.utcoffset().total_seconds()))


if __name__ == "__main__":
    unittest.main()
