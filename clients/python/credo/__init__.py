"""credo: memory that stays true over time for AI agents. A client of credo's HTTP API.

    from credo import Client

    memory = Client("http://127.0.0.1:9464", key)
    memory.add_transcript("user:ana", [{"role": "user", "content": "I moved to Miami."}])
    print(memory.context("user:ana", "Where does the user live?"))

Standard library only; Python 3.9+. Every method is one operation of the API
(docs/api.md); errors are exceptions carrying the API's code (credo.errors).
"""

from __future__ import annotations

from .client import Client
from .errors import (
    APIError,
    CredoError,
    Forbidden,
    InvalidRequest,
    InvalidResponse,
    NotFound,
    RateLimited,
    Redirected,
    Refused,
    ServerError,
    Timeout,
    TransportError,
    Unauthorized,
)
from .types import (
    Answer,
    Audit,
    AuditOrigin,
    AuditRefusals,
    AuditRevisions,
    Belief,
    Beliefs,
    Change,
    Changes,
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
    ItemBelief,
    Merged,
    MergeProposal,
    Message,
    Policy,
    PolicyPattern,
    Proposal,
    Purged,
    Reverted,
    Revision,
    ScopeImported,
    ScopePurged,
    Slot,
    Subtree,
    Transcript,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
    WebhookTest,
)
from .webhooks import WebhookVerificationError, verify_webhook

# The version of the API this client speaks: its OpenAPI document's.
__version__ = "1.0.0"

__all__ = [
    "Client",
    "APIError", "CredoError", "Forbidden", "InvalidRequest", "InvalidResponse", "NotFound", "RateLimited", "Redirected",
    "Refused", "ServerError", "Timeout", "TransportError", "Unauthorized",
    "Answer", "Audit", "AuditOrigin", "AuditRefusals", "AuditRevisions", "Belief", "Beliefs", "Conflict", "Context",
    "Decided", "Enqueued", "Entity", "EntityView", "Episode", "Event", "Forgotten", "ImportReport",
    "ItemBelief", "Merged",
    "MergeProposal", "Message", "Policy", "PolicyPattern", "Proposal", "Purged", "Reverted", "Revision", "ScopeImported",
    "ScopePurged", "Slot", "Subtree", "Transcript",
    "Change", "Changes", "Webhook", "WebhookAttempt", "WebhookDelivery", "WebhookTest", "WebhookVerificationError", "verify_webhook",
]
