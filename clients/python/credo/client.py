"""The client: one method per operation of credo's HTTP API (docs/api.md)."""

from __future__ import annotations

import itertools
import json
import logging
import os
import random
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, BinaryIO, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Type, TypeVar, Union

from ._http import exchange, open_once
from .errors import (CredoError, InvalidResponse, RateLimited, ServerError, Timeout, TransportError, api_error,
                     redirected)
from .types import (
    Answer,
    Audit,
    Belief,
    Beliefs,
    Change,
    Changes,
    Webhook,
    WebhookDelivery,
    WebhookTest,
    Conflict,
    Context,
    Decided,
    Enqueued,
    Entity,
    EntityView,
    Episode,
    Event,
    Forgotten,
    ImportReport,
    Merged,
    MessageLike,
    Mismatch,
    Policy,
    PolicyPattern,
    Reverted,
    Revision,
    Transcript,
    format_time,
    load,
    transcript_json,
)

log = logging.getLogger("credo")

DEFAULT_URL = "http://127.0.0.1:9464"

TimeLike = Union[datetime, date, str]
TranscriptLike = Union[Transcript, Mapping[str, Any]]
T = TypeVar("T")


class Client:
    """A client of one credo worker's API.

    ``url`` defaults to ``$CREDO_URL`` (else http://127.0.0.1:9464) and ``key`` to
    ``$CREDO_KEY``: an API key made with ``beliefs keys create``. Each call ends within
    ``timeout`` seconds, whatever the server does: connecting, sending, reading the
    whole answer, retries and the waits between them. A 429 is retried after the
    server's Retry-After; a 5xx answer or a broken connection is retried, with
    exponential backoff from ``backoff`` seconds, for requests that are safe to repeat
    (reads, questions, and transcripts, which the server deduplicates); ``max_retries``
    bounds the retries of one call, and a wait that would end past the call's timeout
    is not made: the failure is raised at once. No redirect is followed, to another
    host or to the API's own: a 3xx raises :class:`~credo.Redirected` naming where it
    pointed, so the key and the request never go elsewhere. Every failure is a
    :class:`~credo.CredoError`. Retries are logged on the ``credo`` logger.
    """

    def __init__(self, url: Optional[str] = None, key: Optional[str] = None, *, timeout: float = 30.0,
                 max_retries: int = 3, backoff: float = 0.5) -> None:
        self.url = (url or os.environ.get("CREDO_URL") or DEFAULT_URL).rstrip("/")
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"url {self.url!r} is not an http:// or https:// address, e.g. {DEFAULT_URL}")
        self.key = key if key is not None else os.environ.get("CREDO_KEY")
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff

    # Transcripts and episodes.

    def add_transcript(self, scope: str, messages: Sequence[MessageLike], *, id: Optional[str] = None,
                       occurred_at: Optional[Union[datetime, str]] = None) -> Enqueued:
        """Remember one conversation (enqueueTranscripts): extraction runs in the
        background; ``wait`` waits for it."""
        return self.add_transcripts([Transcript(scope, list(messages), id=id, occurred_at=occurred_at)])

    def add_transcripts(self, transcripts: Iterable[TranscriptLike]) -> Enqueued:
        """Remember conversations, all or none (enqueueTranscripts). A transcript already
        stored in its scope is a duplicate, answered with its episode's id."""
        body = [transcript_json(t) for t in transcripts]
        return self._call(Enqueued, "POST", "/v1/transcripts", body=body, idempotent=True)

    def episode(self, id: int) -> Episode:
        """The processing state of one transcript (getEpisode)."""
        return self._call(Episode, "GET", f"/v1/episodes/{int(id)}")

    def wait(self, episodes: Union[Enqueued, int, Iterable[int]], *, timeout: float = 120.0,
             poll: float = 0.25) -> List[Episode]:
        """Poll until every episode is applied or failed, and return them in order;
        raises Timeout when one is still pending after ``timeout`` seconds (each poll
        ends by then too), naming each with its attempts and last error (the model
        server down, say)."""
        if isinstance(episodes, Enqueued):
            ids = list(episodes.episode_ids)
        elif isinstance(episodes, int):
            ids = [episodes]
        else:
            ids = list(episodes)
        deadline = time.monotonic() + timeout
        done: Dict[int, Episode] = {}
        seen: Dict[int, Episode] = {}
        cut = False
        while True:
            for i in ids:
                left = deadline - time.monotonic()
                if i in done or left <= 0:
                    continue
                try:
                    e = self._call(Episode, "GET", f"/v1/episodes/{int(i)}", timeout=min(self.timeout, left))
                except Timeout:
                    if left >= self.timeout:
                        raise
                    # A poll cut short by the wait's deadline is the wait's timeout, which
                    # says why.
                    cut = True
                    break
                seen[i] = e
                if e.state != "pending":
                    done[i] = e
            pending = [i for i in ids if i not in done]
            if not pending:
                return [done[i] for i in ids]
            left = deadline - time.monotonic()
            if left <= 0 or cut:
                why = "; ".join(_pending_why(i, seen.get(i)) for i in pending)
                raise Timeout(f"episodes {pending} still pending after {timeout:g} s: {why}")
            time.sleep(min(poll, left))

    # Reading.

    def beliefs(self, scope: str, *, query: Optional[str] = None, k: Optional[int] = None,
                as_of: Optional[TimeLike] = None, known_at: Optional[TimeLike] = None, history: bool = False,
                inherit: bool = False) -> Beliefs:
        """Beliefs of a scope (listBeliefs): current ones; the ``k`` nearest to ``query``
        (a question about the past is answered from history); with ``history``, the
        superseded and retracted ones too; what was true ``as_of`` a time; what memory
        held ``known_at`` a time. ``inherit`` adds the ancestor scopes' defaults."""
        q = _query(scope=scope, query=query, k=k, all=history or None, inherit=inherit or None,
                   as_of=_time_param(as_of), known_at=_time_param(known_at))
        return self._call(Beliefs, "GET", "/v1/beliefs", query=q)

    def history(self, id: int) -> List[Belief]:
        """The supersession chain through one belief, oldest first (beliefHistory)."""
        return self._call(_History, "GET", f"/v1/beliefs/{int(id)}/history").beliefs

    def events(self, scope: str, *, limit: Optional[int] = None) -> List[Event]:
        """Revision events of a scope, newest first (listEvents)."""
        return self._call(_Events, "GET", "/v1/events", query=_query(scope=scope, limit=limit)).events

    def audit(self, scope: Optional[str] = None, *, scope_prefix: Optional[str] = None,
              since: Optional[TimeLike] = None) -> Audit:
        """How precise the revisions of a scope, or of every scope under ``scope_prefix``,
        were (audit): applied revisions by origin, action and reason, how many an operator
        reverted or corrected since, each writer's precision, and the refused revisions
        with their decisions; only what was made at or after ``since`` when given. A key
        with one scope prefix may give neither scope nor prefix: it audits its prefix."""
        q = _query(scope=scope, scope_prefix=scope_prefix, since=_time_param(since))
        return self._call(Audit, "GET", "/v1/audit", query=q)

    def context(self, scope: str, query: Optional[str] = None, *, k: Optional[int] = None,
                budget: Optional[int] = None, inherit: bool = False, as_of: Optional[TimeLike] = None) -> Context:
        """What memory holds for ``query``, as a block for a prompt (getContext);
        ``str()`` of the answer is the block."""
        q = _query(scope=scope, query=query, k=k, budget=budget, inherit=inherit or None, as_of=_time_param(as_of))
        return self._call(Context, "GET", "/v1/context", query=q)

    def ask(self, scope: str, question: str, *, inherit: bool = False) -> Answer:
        """A short answer from memory with the beliefs it cites (ask)."""
        body: Dict[str, Any] = {"scope": scope, "question": question}
        if inherit:
            body["inherit"] = True
        return self._call(Answer, "POST", "/v1/ask", body=body, idempotent=True)

    # The entity registry.

    def list_entities(self, scope: str) -> List[Entity]:
        """The entities of a scope, whom its beliefs are about, the user first, then by
        name (listEntities); a belief's ``entity`` is one's ``key``."""
        return self._call(_Entities, "GET", "/v1/entities", query=_query(scope=scope)).entities

    def get_entity(self, scope: str, name: str, *, history: bool = False) -> EntityView:
        """One entity of a scope, found by its name or any alias ("my sister", "Sarah"),
        with its current beliefs by slot and, with ``history``, each slot's chain, oldest
        first (getEntity). Raises NotFound, whose message names the nearest known name,
        for a name the scope knows no entity by."""
        path = "/v1/entities/" + urllib.parse.quote(name, safe="")
        return self._call(EntityView, "GET", path, query=_query(scope=scope, history=history or None))

    def merge_entities(self, scope: str, into: str, other: str, *, note: Optional[str] = None) -> Merged:
        """Say that two names of a scope are one entity (mergeEntities): ``other``'s names
        become aliases of ``into`` and its beliefs ``into``'s; nothing else changes. Raises
        InvalidRequest for one entity twice or the user as ``other``, NotFound for an
        unknown name."""
        body = _body(scope=scope, into=into, other=other, note=note)
        return self._call(Merged, "POST", "/v1/entities/merge", body=body)

    # The review queue.

    def conflicts(self, scope: str, *, all: bool = False) -> List[Conflict]:
        """The review queue of a scope, oldest first: open items, or every item with
        ``all`` (listConflicts)."""
        return self._call(_Conflicts, "GET", "/v1/conflicts", query=_query(scope=scope, all=all or None)).conflicts

    def resolve(self, id: int, action: str, *, note: Optional[str] = None) -> Decided:
        """Decide a review item: ``apply`` or ``dismiss`` (resolveConflict). Raises
        Refused when it is already resolved or no longer applies."""
        body: Dict[str, Any] = {"action": action}
        if note is not None:
            body["note"] = note
        return self._call(Decided, "POST", f"/v1/conflicts/{int(id)}/resolve", body=body)

    # An operator's changes.

    def assert_belief(self, scope: str, statement: str, attribute: str, *, subject: Optional[str] = None,
                      kind: Optional[str] = None, authoritative: bool = False,
                      valid_from: Optional[Union[datetime, str]] = None) -> Revision:
        """Assert a belief as an operator (assertBelief); an ``authoritative`` one is
        never changed by extraction or consolidation."""
        body = _body(scope=scope, statement=statement, attribute=attribute, subject=subject, kind=kind,
                      authoritative=authoritative or None,
                      valid_from=format_time(valid_from) if valid_from is not None else None)
        return self._call(Revision, "POST", "/v1/beliefs", body=body)

    def correct(self, id: int, statement: Optional[str] = None, *, retract: bool = False,
                reason: Optional[str] = None) -> Revision:
        """Correct one belief with ``statement``, or ``retract`` it (correctBelief);
        ``reason`` is correction (never true, the default) or temporal (it changed)."""
        body = _body(statement=statement, retract=retract or None, reason=reason)
        return self._call(Revision, "POST", f"/v1/beliefs/{int(id)}/correct", body=body)

    def revert(self, event_id: int, *, note: Optional[str] = None) -> Reverted:
        """Undo one applied revision, an event of ``events`` (revertEvent): a superseded
        belief is current again as it was and the one that replaced it is retracted as
        never true; ``note`` says why it was wrong. Only the latest revision of a chain:
        raises Refused, with the reason, for one that a later revision built on, a revert,
        or an event reverted already."""
        body = _body(note=note)
        return self._call(Reverted, "POST", f"/v1/events/{int(event_id)}/revert", body=body or None)

    def forget(self, scope: Optional[str] = None, *, ids: Optional[Sequence[int]] = None, match: Optional[str] = None,
               all: bool = False, purge: bool = False, scope_prefix: Optional[str] = None,
               entity: Optional[str] = None) -> Forgotten:
        """Forget beliefs of a scope by ``ids``, ``match``, ``entity`` (every belief about
        the entity of that name or alias) or ``all`` (forget): softly, or erased for good
        with ``purge``; ``scope_prefix`` with ``all`` and ``purge`` erases every scope
        under a prefix."""
        body = _body(scope=scope, ids=list(ids) if ids is not None else None, match=match, entity=entity,
                      all=all or None, purge=purge or None, scope_prefix=scope_prefix)
        return self._call(Forgotten, "POST", "/v1/forget", body=body)

    # Moving memory.

    def export(self, scope: Optional[str] = None, *, scope_prefix: Optional[str] = None,
               since: Optional[TimeLike] = None) -> Iterator[Dict[str, Any]]:
        """A scope's memory, or every scope's under ``scope_prefix``, as it streams from one
        snapshot (exportMemory): the header, then each record, as dicts, one line at a
        time; ``since`` keeps what changed at or after it. Written one JSON line each,
        they are a file ``import_file`` takes. Raises TransportError when the export is
        cut short: its end record never came."""
        q = _query(scope=scope, scope_prefix=scope_prefix, since=_time_param(since))
        url = self.url + "/v1/export?" + urllib.parse.urlencode(q)
        req = urllib.request.Request(url, method="GET", headers=self._headers("application/x-ndjson"))
        try:
            res = open_once(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            with e:
                err = redirected(e.code, e.headers, "GET /v1/export") if 300 <= e.code < 400 else \
                    api_error(e.code, e.headers, e.read())
            raise err from None
        except (urllib.error.URLError, OSError) as e:
            raise TransportError(f"GET /v1/export: {getattr(e, 'reason', e)}") from e
        with res:
            ended = False
            for line in res:
                if line.strip():
                    try:
                        record = json.loads(line)
                    except (ValueError, RecursionError) as e:
                        raise InvalidResponse(res.status, f"GET /v1/export: a line is not JSON: {e}") from None
                    ended = record.get("type") == "end"
                    yield record
        if not ended:
            raise TransportError("GET /v1/export: the export was cut short (no end record)")

    def import_file(self, file: Union[str, "os.PathLike[str]", bytes, BinaryIO], *,
                    scope_map: Optional[Mapping[str, str]] = None, source: str = "credo",
                    scope_template: Optional[str] = None) -> ImportReport:
        """Import an export (a path, the bytes, or a binary file) into scopes that hold
        nothing (importMemory); ``scope_map`` imports each scope OLD, and those under
        OLD/, as NEW. ``source="mem0"`` reads mem0's exported memories instead, one scope
        per ``scope_template`` (default ``user:{user_id}``). Raises InvalidRequest naming
        the line of a bad record, Refused when a scope holds memory: nothing is imported."""
        if isinstance(file, bytes):
            data = file
        elif hasattr(file, "read"):
            data = file.read()  # type: ignore[union-attr]
        else:
            with open(file, "rb") as f:  # type: ignore[arg-type]
                data = f.read()
        q = _query(scope_template=scope_template)
        if source != "credo":
            q["from"] = source
        if scope_map:
            q["scope_map"] = [f"{old}={new}" for old, new in scope_map.items()]
        kind = "application/json" if source == "mem0" else "application/x-ndjson"
        return self._call(ImportReport, "POST", "/v1/import", query=q, data=data, content_type=kind)

    # Organisations' policies.

    def set_policy(self, scope_prefix: str, *, instructions: Optional[str] = None,
                   redact_patterns: Optional[Sequence[Union[PolicyPattern, Mapping[str, str]]]] = None,
                   redact: Optional[Sequence[str]] = None) -> Policy:
        """Set the policy of a scope prefix, replacing the one it had (setPolicy): its
        ``instructions`` reach the extraction and consolidation prompts of every scope
        under it; its ``redact`` kinds (default: the deployment's) and ``redact_patterns``
        redact what is enqueued there afterwards. A scope's policy is the one of its
        longest prefix."""
        patterns = None
        if redact_patterns is not None:
            patterns = [{"name": p.name, "regex": p.regex} if isinstance(p, PolicyPattern) else dict(p)
                        for p in redact_patterns]
        body = _body(scope_prefix=scope_prefix, instructions=instructions, redact_patterns=patterns,
                      redact=list(redact) if redact is not None else None)
        return self._call(Policy, "PUT", "/v1/policies", body=body, idempotent=True)

    def policies(self, scope: Optional[str] = None) -> List[Policy]:
        """The policies within the key's prefixes, or with ``scope`` the one in force
        there, whose ``scope_prefix`` says where it comes from (getPolicies)."""
        return self._call(_Policies, "GET", "/v1/policies", query=_query(scope=scope)).policies

    def unset_policy(self, scope_prefix: str) -> Policy:
        """Unset the policy of a scope prefix, answered with it (unsetPolicy); raises
        NotFound when it has none."""
        return self._call(Policy, "DELETE", "/v1/policies", query=_query(scope_prefix=scope_prefix))

    # The change feed and webhooks.

    def changes(self, scope: Optional[str] = None, *, scope_prefix: Optional[str] = None, after: Optional[str] = None,
                limit: Optional[int] = None, wait: Optional[int] = None) -> Changes:
        """What changed in a scope, or in every scope under ``scope_prefix``, after the
        cursor ``after``, in commit order (listChanges); with ``wait`` (seconds, at most
        30), an empty read waits for the next change. Pass the answer's ``cursor`` as
        ``after`` to read what follows: nothing is missed or given twice."""
        q = _query(scope=scope, scope_prefix=scope_prefix, after=after, limit=limit, wait=wait)
        timeout = None if not wait else max(self.timeout, float(wait) + 10)
        return self._call(Changes, "GET", "/v1/changes", query=q, timeout=timeout)

    def iter_changes(self, scope: Optional[str] = None, *, scope_prefix: Optional[str] = None,
                     after: Optional[str] = None, wait: int = 30,
                     limit: Optional[int] = None) -> Iterator[Tuple[Change, Optional[str]]]:
        """Every change after ``after``, then each new one as it commits (long polls of
        ``wait`` seconds), forever. Each change comes with the cursor after it:
        ``for change, cursor in client.iter_changes(...)``; store the cursor once the
        change is handled, and pass it as ``after`` to resume after a restart."""
        cursor = after
        while True:
            page = self.changes(scope, scope_prefix=scope_prefix, after=cursor, limit=limit, wait=wait)
            for i, change in enumerate(page.changes):
                # Within a page, the cursor after change i is the page's, less what follows:
                # only the page's end is a cursor the server gave, so the last change carries it.
                yield change, (page.cursor if i == len(page.changes) - 1 else cursor)
            cursor = page.cursor

    def create_webhook(self, url: str, scope_prefix: str, *, events: Optional[Sequence[str]] = None) -> Webhook:
        """Subscribe ``url`` to the changes of every scope under ``scope_prefix``
        (createWebhook), of the types in ``events`` (default: all). The answer's ``secret``
        is shown this once: verify deliveries with it (verify_webhook)."""
        body = _body(url=url, scope_prefix=scope_prefix, events=list(events) if events is not None else None)
        return self._call(Webhook, "POST", "/v1/webhooks", body=body)

    def webhooks(self) -> List[Webhook]:
        """The webhooks within the key's prefixes, with their deliveries' status
        (listWebhooks)."""
        return self._call(_Webhooks, "GET", "/v1/webhooks").webhooks

    def delete_webhook(self, id: int) -> Webhook:
        """Delete a webhook, answered with it (deleteWebhook)."""
        return self._call(Webhook, "DELETE", "/v1/webhooks", query=_query(id=int(id)))

    def test_webhook(self, id: int) -> WebhookTest:
        """Send a webhook a signed test message now, and its answer (testWebhook)."""
        return self._call(WebhookTest, "POST", f"/v1/webhooks/{int(id)}/test")

    def rotate_webhook_secret(self, id: int) -> Webhook:
        """A new secret for a webhook, in the answer's ``secret``; the old one still
        signs for a day (rotateWebhookSecret)."""
        return self._call(Webhook, "POST", f"/v1/webhooks/{int(id)}/rotate")

    def update_webhook(self, id: int, *, url: Optional[str] = None, events: Optional[Sequence[str]] = None) -> Webhook:
        """Change a webhook's URL or events (an empty list: every type); what is not given
        stays (updateWebhook)."""
        body = _body(url=url, events=list(events) if events is not None else None)
        return self._call(Webhook, "PATCH", f"/v1/webhooks/{int(id)}", body=body)

    def enable_webhook(self, id: int) -> Webhook:
        """Re-enable a disabled webhook (enableWebhook); resend_webhook sends again what it
        missed."""
        return self._call(Webhook, "POST", f"/v1/webhooks/{int(id)}/enable")

    def webhook_deliveries(self, id: int, *, state: Optional[str] = None,
                           limit: Optional[int] = None) -> List[WebhookDelivery]:
        """A webhook's log: its deliveries, newest first, each with its attempts
        (listWebhookDeliveries)."""
        q = _query(state=state, limit=limit)
        return self._call(_WebhookDeliveries, "GET", f"/v1/webhooks/{int(id)}/deliveries", query=q).deliveries

    def resend_webhook(self, id: int, *, message_id: Optional[str] = None, all: bool = False) -> int:
        """Send again one delivery given up or dropped (``message_id``), or ``all`` of
        them, under their message ids; answers how many were queued (resendWebhook)."""
        body = _body(message_id=message_id, all=all or None)
        return self._call(_WebhookResent, "POST", f"/v1/webhooks/{int(id)}/resend", body=body).resent

    # The wire.

    def _headers(self, accept: str = "application/json") -> Dict[str, str]:
        headers = {"Accept": accept, "User-Agent": "credo-python/" + _version()}
        if self.key:
            headers["Authorization"] = "Bearer " + self.key
        return headers

    def _call(self, answer: Type[T], method: str, path: str, *, query: Optional[Mapping[str, Any]] = None,
              body: Any = None, idempotent: Optional[bool] = None, timeout: Optional[float] = None,
              data: Optional[bytes] = None, content_type: Optional[str] = None) -> T:
        """One operation: its JSON answer as an ``answer``, checked field by field, or one
        of the client's errors (InvalidResponse for an answer of another shape)."""
        status, headers, raw = self._request(method, path, query=query, body=body, idempotent=idempotent,
                                             timeout=timeout, data=data, content_type=content_type)
        what = f"{method} {path}"
        try:
            decoded = json.loads(raw)
        except (ValueError, RecursionError) as e:  # not JSON, not UTF-8, nested too deep
            kind = headers.get("Content-Type") or "no content type"
            raise InvalidResponse(status, f"{what}: the answer ({kind}) is not JSON: {e}") from None
        try:
            return load(answer, decoded)
        except Mismatch as e:
            raise InvalidResponse(status, f"{what}: the answer is not a {answer.__name__}: {e}") from None

    def _request(self, method: str, path: str, *, query: Optional[Mapping[str, Any]] = None, body: Any = None,
                 idempotent: Optional[bool] = None, timeout: Optional[float] = None,
                 data: Optional[bytes] = None,
                 content_type: Optional[str] = None) -> Tuple[int, Mapping[str, str], bytes]:
        """The request every operation makes: its 2xx answer's status, headers and body,
        or the API's error as an exception, all by one deadline, ``timeout`` seconds
        (default: the client's) from now, retries and their waits included. A 429 is
        retried always (the server refused before doing anything); the rest only when
        ``idempotent`` (by default: GET). A wait that would end past the deadline is not
        made: the failure is raised at once. ``data`` is sent as ``content_type`` in place
        of a JSON ``body``."""
        if idempotent is None:
            idempotent = method == "GET"
        seconds = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + seconds
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode(query, doseq=True)
        if data is None and body is not None:
            data, content_type = json.dumps(body).encode("utf-8"), "application/json"
        headers = self._headers()
        if data is not None:
            headers["Content-Type"] = content_type or "application/json"
        what = f"{method} {path}"
        for attempt in itertools.count():
            failure: CredoError
            try:
                req = urllib.request.Request(url, data=data, method=method, headers=headers)
                status, got, raw = exchange(req, deadline, what, seconds)
            except TransportError as e:
                failure = e
            else:
                if 200 <= status < 300:
                    return status, got, raw
                if 300 <= status < 400:
                    raise redirected(status, got, what)
                failure = api_error(status, got, raw)
            if not _retried(failure, idempotent) or attempt >= self.max_retries:
                raise failure
            delay = self.backoff * (2 ** attempt) * (0.5 + random.random() / 2)
            if isinstance(failure, RateLimited) and failure.retry_after is not None:
                delay = failure.retry_after
            if time.monotonic() + delay >= deadline:
                log.info("credo: %s: %s; not retried: a wait of %.2f s would end past the deadline", what, failure,
                         delay)
                raise failure
            log.info("credo: %s: %s; retry %d of %d in %.2f s", what, failure, attempt + 1, self.max_retries, delay)
            time.sleep(delay)
        raise AssertionError("unreachable")


def _retried(failure: CredoError, idempotent: bool) -> bool:
    """Whether a failed request is sent again (time allowing)."""
    if isinstance(failure, RateLimited):
        return True  # refused before anything was done
    if isinstance(failure, Timeout):
        return False  # the deadline passed: no time is left
    return idempotent and isinstance(failure, (ServerError, TransportError))


@dataclass
class _History:
    beliefs: List[Belief]


@dataclass
class _Events:
    events: List[Event]


@dataclass
class _Entities:
    entities: List[Entity]


@dataclass
class _Conflicts:
    conflicts: List[Conflict]


@dataclass
class _Policies:
    policies: List[Policy]


@dataclass
class _Webhooks:
    webhooks: List[Webhook]


@dataclass
class _WebhookDeliveries:
    deliveries: List[WebhookDelivery]


@dataclass
class _WebhookResent:
    resent: int


def _query(**params: Any) -> Dict[str, Any]:
    """params without the unset ones; booleans as the API spells them."""
    out: Dict[str, Any] = {}
    for k, v in params.items():
        if v is None:
            continue
        out[k] = ("true" if v else "false") if isinstance(v, bool) else v
    return out


def _body(**fields: Any) -> Dict[str, Any]:
    """A JSON body without the unset fields."""
    return {k: v for k, v in fields.items() if v is not None}


def _time_param(v: Optional[TimeLike]) -> Optional[str]:
    return None if v is None else format_time(v)


def _version() -> str:
    from . import __version__

    return __version__


def _pending_why(id: int, e: Optional[Episode]) -> str:
    """Why episode ``id`` is still pending, as far as its last state says."""
    if e is None:
        return f"{id}: not read before the deadline"
    if e.attempts == 0:
        return f"{id}: not tried yet (is a worker running?)"
    return f"{id}: {e.attempts} attempts, last error: {e.last_error or 'none'}"
