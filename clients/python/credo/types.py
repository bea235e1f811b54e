"""What the API answers, as dataclasses, and what a transcript holds.

Field names are the API's JSON names (docs/api.md, /v1/openapi.json). Times are
timezone-aware ``datetime`` values; lists the API may send as null are empty lists.
Fields the client does not know yet (a newer server) are ignored.
"""

from __future__ import annotations

import functools
import re
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from datetime import date, datetime
from typing import (Any, Dict, List, Mapping, Optional, Tuple, Type, TypeVar, Union, get_args, get_origin,
                    get_type_hints)

T = TypeVar("T")

_FRACTION = re.compile(r"\.(\d+)")


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """An RFC 3339 time as the API writes it (Z, up to nanoseconds), for Python 3.9's
    ``fromisoformat``, which takes neither."""
    if value is None:
        return None
    s = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    s = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), s, count=1)
    return datetime.fromisoformat(s)


def format_time(value: Union[datetime, date, str]) -> str:
    """A time for the API: RFC 3339 for a datetime (which must carry its timezone: the
    API does not guess one), YYYY-MM-DD for a date, a string as it is."""
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"{value!r} has no timezone; use e.g. datetime(..., tzinfo=timezone.utc)")
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


class Mismatch(ValueError):
    """An answer that is not the shape of its type: ``where`` is the path to the field
    (``beliefs[3].id``), empty for the answer itself."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}" if where else problem)
        self.where = where
        self.problem = problem


@functools.lru_cache(maxsize=None)
def _fields(cls: type) -> Tuple[Tuple[str, Any, bool], ...]:
    """(name, type, required) of each field of a dataclass, its annotations resolved."""
    hints = get_type_hints(cls)
    return tuple((f.name, hints[f.name], f.default is MISSING and f.default_factory is MISSING)
                 for f in fields(cls))


def _json_kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    return "an array" if isinstance(v, list) else "an object"


def _convert(tp: Any, v: Any, where: str) -> Any:
    """v, a JSON value, as a value of the annotation tp; Mismatch when it is not one.
    The API writes an empty list as null: a list field takes null as []."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is Any:
        return v
    if origin is Union:  # Optional[X]: the client's types have no other unions
        if v is None:
            return None
        (of,) = [a for a in args if a is not type(None)]
        return _convert(of, v, where)
    if origin is list:
        if v is None:
            return []
        if isinstance(v, list):
            return [_convert(args[0], x, f"{where}[{i}]") for i, x in enumerate(v)]
    elif origin is dict:
        if v is None:
            return {}
        if isinstance(v, dict):
            return {k: _convert(args[1], x, f"{where}.{k}") for k, x in v.items()}
    elif is_dataclass(tp):
        return _load(tp, v, where)
    elif tp is datetime:
        if isinstance(v, str):
            try:
                return parse_time(v)
            except ValueError:
                pass
        raise Mismatch(where, f"expected an RFC 3339 time, got {_json_kind(v)}")
    elif isinstance(v, bool):  # JSON true is no number
        if tp is bool:
            return v
    elif tp is float and isinstance(v, (int, float)):
        return float(v)
    elif isinstance(v, tp):  # int, str
        return v
    expected = {list: "an array", dict: "an object", bool: "a boolean", int: "an integer", float: "a number",
                str: "a string"}.get(origin or tp, str(tp))
    raise Mismatch(where, f"expected {expected}, got {_json_kind(v)}")


def _load(cls: Type[T], data: Any, where: str = "") -> T:
    """cls from a JSON object: each field checked and converted by its annotation, a
    field without a default required, unknown keys ignored (a newer server's)."""
    if not isinstance(data, dict):
        raise Mismatch(where, f"expected an object, got {_json_kind(data)}")
    kwargs: Dict[str, Any] = {}
    for name, tp, required in _fields(cls):
        if name in data:
            kwargs[name] = _convert(tp, data[name], f"{where}.{name}" if where else name)
        elif required:
            raise Mismatch(where, f"{name} is missing")
    out = cls(**kwargs)  # type: ignore[call-arg]
    problem = out._problem() if hasattr(out, "_problem") else None
    if problem:
        raise Mismatch(where, problem)
    return out


@dataclass
class Match:
    """Why a belief ranked where it did, in an answer ranked for a text: what its
    embedding, the text's words it holds and the entities the text names added."""

    vector: float
    words: float
    entity: float
    fused: float  # the sum: the order of the read
    vector_rank: int = 0  # 0: not in that ranking
    words_rank: int = 0
    entity_rank: int = 0
    words_score: float = 0.0


@dataclass
class Belief:
    """One belief: what memory holds, with its valid time (valid_from, valid_until) and
    known time (recorded_at, retired_at)."""

    id: int
    scope: str
    subject: str
    attribute: str
    kind: str
    statement: str
    status: str  # active, superseded, retracted
    confidence: float
    origin: str
    valid_from: datetime
    valid_until: Optional[datetime]
    recorded_at: datetime
    retired_at: Optional[datetime]
    supersedes: List[int] = field(default_factory=list)
    superseded_by: List[int] = field(default_factory=list)
    episode_id: Optional[int] = None
    quote: Optional[str] = None
    reinforced_count: int = 0
    last_seen_at: Optional[datetime] = None
    depends_on: List[int] = field(default_factory=list)
    needs_review: bool = False
    episodes: List[int] = field(default_factory=list)
    distance: Optional[float] = None  # cosine distance to the query, in ranked answers
    match: Optional[Match] = None  # why it ranked, in answers ranked for a text
    # The key of the entity it is about (get_entity finds it): "user" for the user;
    # empty from a server older than the entity registry.
    entity: str = ""

    @staticmethod
    def load(data: Mapping[str, Any]) -> "Belief":
        return _load(Belief, data)


@dataclass
class Beliefs:
    """An answer of ``beliefs``: the view answered and its beliefs."""

    mode: str  # current, history, as_of, known_at
    auto_history: bool
    ranked: bool
    beliefs: List[Belief]

    def statements(self) -> List[str]:
        return [b.statement for b in self.beliefs]


@dataclass
class Event:
    """An applied revision: supersede, retract, reinforce, or an operator's revert of
    another event, with what caused it."""

    id: int
    scope: str
    action: str  # supersede, retract, reinforce, revert
    reason: str
    origin: str
    old_belief_id: int
    old_statement: str
    created_at: datetime
    new_belief_id: Optional[int] = None
    new_statement: Optional[str] = None
    excerpt: Optional[str] = None
    rationale: Optional[str] = None
    episode_id: Optional[int] = None
    reverts: Optional[int] = None  # for a revert, the event it undid
    reverted_by: Optional[int] = None  # the revert that undid this event, if one did
    reverted_at: Optional[datetime] = None


@dataclass
class Reverted:
    """What ``revert`` did: the revert's own event (action revert, ``reverts`` naming the
    event undone), the event undone with ``reverted_by`` and ``reverted_at``, and the
    beliefs current again (``restored``) or retracted as never true (``retracted``)."""

    revert: Event
    event: Event
    restored: List[int] = field(default_factory=list)
    retracted: List[int] = field(default_factory=list)
    unreinforced: Optional[int] = None  # the belief whose restatement was taken back


@dataclass
class AuditRevisions:
    """The applied revisions of one origin, action and reason: how many an operator
    reverted, and how many stand but had what they wrote corrected since."""

    origin: str  # extraction, consolidation, operator
    action: str  # supersede, retract, reinforce
    reason: str
    applied: int
    reverted: int
    corrected: int


@dataclass
class AuditOrigin:
    """One writer's revisions, and its precision: 1 - reverted / applied (None when it
    applied nothing)."""

    origin: str
    applied: int
    reverted: int
    corrected: int
    precision: Optional[float] = None


@dataclass
class AuditRefusals:
    """The revisions of one origin refused for one cause, and how they were decided."""

    origin: str
    cause: str  # entrenchment, stale_target, time_order, invalid_index, event
    refused: int
    open: int
    applied: int
    dismissed: int
    closed: int


@dataclass
class Audit:
    """How precise the revisions of a scope (or of the scopes under ``scope_prefix``)
    were, made at or after ``since`` when given: an answer of ``audit``."""

    revisions: List[AuditRevisions]  # reverts apart
    origins: List[AuditOrigin]
    refusals: List[AuditRefusals]
    reverts: int  # reverts operators made
    scope: Optional[str] = None  # None for a prefix
    scope_prefix: Optional[str] = None  # None for one scope
    since: Optional[datetime] = None


@dataclass
class MergeProposal:
    """Two entities of a scope, by key, that a same_entity review item proposes to merge:
    ``other`` into ``into``."""

    into: str
    other: str


@dataclass
class Proposal:
    """The belief a refused revision would have written; for a same_entity item, the
    entities applying it merges (``merge``)."""

    statement: str = ""
    subject: str = ""
    attribute: str = ""
    kind: str = ""
    confidence: float = 0.0
    origin: str = ""
    valid_from: Optional[datetime] = None
    quote: str = ""
    at: Optional[datetime] = None
    merge: Optional[MergeProposal] = None
    opinion: str = ""  # for cause second_opinion: the second opinion's reason


@dataclass
class ItemBelief:
    """The belief a review item would revise, or the changed basis, as it is now."""

    id: int
    statement: str
    subject: str
    entity: str
    attribute: str
    kind: str
    origin: str
    status: str
    valid_from: datetime
    valid_until: Optional[datetime] = None


@dataclass
class Conflict:
    """An item of the review queue: a refused revision, or a belief whose basis changed."""

    id: int
    scope: str
    kind: str  # refused, basis_changed
    origin: str
    action: str
    statement: str
    detail: str
    status: str  # open, resolved
    created_at: datetime
    cause: Optional[str] = None
    reason: Optional[str] = None
    belief_id: Optional[int] = None
    target_id: Optional[int] = None
    proposed: Optional[Proposal] = None
    episode_id: Optional[int] = None
    resolved_at: Optional[datetime] = None
    resolution: Optional[str] = None
    note: Optional[str] = None
    target: Optional[ItemBelief] = None  # what applying the item would revise, as it is now
    why: str = ""  # the cause in words; detail keeps what was measured


@dataclass
class Revision:
    """What the revision engine did with an operator's revision."""

    outcome: str
    belief_id: Optional[int] = None
    target_id: Optional[int] = None


@dataclass
class Decided:
    """A resolved review item, and the revision applied for ``apply``."""

    conflict: Conflict
    revision: Optional[Revision] = None


@dataclass
class Enqueued:
    """Transcripts accepted: one episode id per record, in input order."""

    episode_ids: List[int]
    enqueued: int = 0
    duplicates: int = 0
    # Secrets replaced by placeholders before the records were stored, by kind; never
    # the values.
    redacted: Dict[str, int] = field(default_factory=dict)


@dataclass
class Episode:
    """The processing state of one transcript."""

    id: int
    scope: str
    state: str  # pending, applied, failed
    attempts: int
    external_id: Optional[str] = None
    last_error: Optional[str] = None
    occurred_at: Optional[datetime] = None
    received_at: Optional[datetime] = None
    processed_at: Optional[datetime] = None
    redacted_at: Optional[datetime] = None
    redactions: Optional[Dict[str, int]] = None  # secrets replaced by placeholders, by kind


@dataclass
class PolicyPattern:
    """An organisation's own secret: matches of ``regex`` (RE2) become [redacted NAME]."""

    name: str
    regex: str


@dataclass
class Policy:
    """An organisation's policy for every scope starting with ``scope_prefix``."""

    scope_prefix: str
    instructions: str
    redact_patterns: List[PolicyPattern]
    redact: Optional[str] = None  # the kinds redacted, or None: the deployment's (REDACT)
    updated_at: Optional[datetime] = None


@dataclass
class Purged:
    """What a purge erased: rows per table."""

    what: str  # beliefs, scope
    counts: Dict[str, int] = field(default_factory=dict)
    relinked: int = 0


@dataclass
class ScopePurged(Purged):
    scope: str = ""


@dataclass
class Subtree:
    """What a purge of every scope under a prefix erased."""

    prefix: str
    scopes: List[ScopePurged]
    counts: Dict[str, int] = field(default_factory=dict)


@dataclass
class Forgotten:
    """An answer of ``forget``: the ids forgotten (soft), or what a purge erased."""

    forgotten: Optional[List[int]] = None
    purged: Optional[Purged] = None
    subtree: Optional[Subtree] = None

    def _problem(self) -> Optional[str]:
        """What an answer of forget must hold that its fields' types do not say."""
        if self.forgotten is None and self.purged is None and self.subtree is None:
            return "none of forgotten, purged and subtree"
        return None


@dataclass
class Context:
    """What memory holds for a question, as a block for a prompt (``context``)."""

    context: str
    mode: str
    beliefs: List[Belief]

    def __str__(self) -> str:
        return self.context


@dataclass
class Answer:
    """A short answer from memory: ``citations`` are ids among ``beliefs``, the beliefs
    the model was shown; ``cited`` are the cited beliefs themselves."""

    answer: str
    citations: List[int]
    beliefs: List[Belief]

    @property
    def cited(self) -> List[Belief]:
        by_id = {b.id: b for b in self.beliefs}
        return [by_id[i] for i in self.citations if i in by_id]


@dataclass
class Entity:
    """One entity of a scope's registry: whom beliefs are about. ``key`` is what a
    belief's ``entity`` names; any of ``name`` and ``aliases`` finds it."""

    scope: str
    key: str
    name: str
    kind: str  # user, person, organisation, place, thing, other
    aliases: List[str] = field(default_factory=list)
    current_beliefs: int = 0
    created_at: Optional[datetime] = None


@dataclass
class Slot:
    """One slot (attribute) of an entity: its current beliefs and, in a read with
    history, every belief it held, oldest first (empty when that is only the current)."""

    attribute: str
    current: List[Belief] = field(default_factory=list)
    history: List[Belief] = field(default_factory=list)


@dataclass
class EntityView(Entity):
    """An entity with its beliefs by slot (``get_entity``)."""

    slots: List[Slot] = field(default_factory=list)


@dataclass
class Merged:
    """What ``merge_entities`` did: the entity that stayed, the beliefs moved to it, and
    the same_entity review items it closed."""

    entity: EntityView
    moved: int
    closed_items: List[int] = field(default_factory=list)


@dataclass
class Message:
    """One message of a transcript."""

    role: str  # user, assistant, system, tool
    content: str
    name: Optional[str] = None  # the speaker, among several people
    at: Optional[Union[datetime, str]] = None

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            out["name"] = self.name
        if self.at is not None:
            out["at"] = format_time(self.at)
        return out


MessageLike = Union[Message, Mapping[str, Any]]


@dataclass
class Transcript:
    """A conversation to remember (docs/configuration.md, the transcript format)."""

    scope: str
    messages: List[MessageLike]
    id: Optional[str] = None  # your id for the conversation
    occurred_at: Optional[Union[datetime, str]] = None  # default: now, on the server

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"scope": self.scope, "messages": [_message(m) for m in self.messages]}
        if self.id is not None:
            out["id"] = self.id
        if self.occurred_at is not None:
            out["occurred_at"] = format_time(self.occurred_at)
        return out


def transcript_json(t: Union[Transcript, Mapping[str, Any]]) -> Dict[str, Any]:
    """A transcript as the API takes it, from a Transcript or a dict that may hold
    datetimes and Message values."""
    if isinstance(t, Transcript):
        return t.to_json()
    out = dict(t)
    if isinstance(out.get("occurred_at"), (datetime, date)):
        out["occurred_at"] = format_time(out["occurred_at"])
    if isinstance(out.get("messages"), (list, tuple)):
        out["messages"] = [_message(m) for m in out["messages"]]
    return out


def _message(m: MessageLike) -> Dict[str, Any]:
    if isinstance(m, Message):
        return m.to_json()
    out = dict(m)
    if isinstance(out.get("at"), (datetime, date)):
        out["at"] = format_time(out["at"])
    return out


@dataclass
class ScopeImported:
    """What one scope received from an import."""

    scope: str
    exported_as: str  # the scope as the file named it
    episodes: int
    beliefs: int
    dependencies: int
    events: int
    review_items: int
    pending_episodes: int  # still to extract: the scope's extraction job is queued
    # secrets the scope's policy replaced on the way in, by kind
    redacted: Dict[str, int] = field(default_factory=dict)
    entities: int = 0  # registered: the export's, or those its beliefs' subjects made


@dataclass
class ImportReport:
    """What an import did (importMemory)."""

    scopes: List[ScopeImported] = field(default_factory=list)
    embedding_model: str = ""
    embedded_rows: int = 0
    embedding_calls: int = 0
    # Set when the embedding model failed: the memory is imported, embedded later.
    embedding_error: Optional[str] = None
    extraction_jobs: int = 0
    consolidation_jobs: int = 0


def load(cls: Type[T], data: Mapping[str, Any]) -> T:
    """cls from the API's JSON."""
    return _load(cls, data)


__all__ = [
    "Answer", "Audit", "AuditOrigin", "AuditRefusals", "AuditRevisions", "Belief", "Beliefs", "Conflict", "Context",
    "Decided", "Enqueued", "Entity", "EntityView", "Episode", "Event", "Forgotten", "ImportReport", "Merged",
    "MergeProposal", "Message", "Proposal", "Purged", "Reverted", "Revision", "ScopeImported", "ScopePurged", "Slot",
    "Subtree", "Transcript", "parse_time", "format_time",
]


@dataclass
class Change:
    """One change of the feed: ``type`` (belief.created, belief.forgotten,
    revision.applied, revision.reverted, review.opened, review.resolved, episode.failed,
    scope.purged), its scope and place (``position``, commit order within the scope,
    never going back), and ``data``: the belief, event, review item, episode or purge
    counts as the API gives them."""

    type: str
    scope: str
    position: int
    timestamp: datetime
    data: Any = None


@dataclass
class Changes:
    """A page of the change feed, and the ``cursor`` to pass as ``after`` next."""

    changes: List[Change]
    cursor: str


@dataclass
class Webhook:
    """A webhook subscription and where its deliveries stand; ``secret`` only when it
    was just created or rotated."""

    id: int
    url: str
    scope_prefix: str
    events: List[str]
    created_at: datetime
    disabled: bool = False
    disabled_reason: Optional[str] = None
    last_status: Optional[int] = None
    last_error: Optional[str] = None
    last_attempt_at: Optional[datetime] = None
    failures_in_row: int = 0
    oldest_undelivered: Optional[datetime] = None
    pending: int = 0
    failed: int = 0
    previous_secret_until: Optional[datetime] = None
    secret: Optional[str] = None


@dataclass
class WebhookTest:
    """The receiver's answer to a test message."""

    status: int
    ok: bool
    error: Optional[str] = None


@dataclass
class WebhookAttempt:
    """One attempt at a delivery: when, the receiver's status (None without an answer),
    and why it failed (None when it was accepted)."""

    at: datetime
    status: Optional[int] = None
    error: Optional[str] = None


@dataclass
class WebhookDelivery:
    """One change sent, or to send, to a webhook (``state``: pending, delivered, failed
    or dropped), under ``message_id``, with its attempts, oldest first."""

    message_id: str
    scope: str
    position: int
    type: str
    state: str
    created_at: datetime
    attempts: List[WebhookAttempt]
    done_at: Optional[datetime] = None
    next_attempt_at: Optional[datetime] = None
