"""Verifying a webhook delivery as Standard Webhooks specifies it.

credo signs each delivery with the webhook's secret (``whsec_`` and base64): the
``webhook-signature`` header holds ``v1,`` and the base64 HMAC-SHA256 of
``webhook-id.webhook-timestamp.body`` (two of them, space-separated, for a day after a
rotation).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union


class WebhookVerificationError(ValueError):
    """A delivery whose signature or timestamp does not hold: reject it (answer 400)."""


def _header(headers: Mapping[str, str], name: str) -> str:
    for k, v in headers.items():
        if k.lower() == name:
            return v
    raise WebhookVerificationError(f"missing header {name}")


def verify_webhook(secret: str, headers: Mapping[str, str], body: Union[bytes, str], *,
                   tolerance: int = 300, now: Optional[float] = None) -> Any:
    """The delivery's JSON body, once its signature is checked against ``secret`` and
    its timestamp is within ``tolerance`` seconds of ``now``; WebhookVerificationError
    otherwise. Pass the body exactly as received (bytes), before any parsing."""
    raw = body.encode() if isinstance(body, str) else bytes(body)
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    try:
        ts = int(timestamp)
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not a number") from None
    current = time.time() if now is None else now
    if abs(current - ts) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too old or too new")
    try:
        key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret, validate=True)
    except ValueError:
        raise WebhookVerificationError("the secret is not whsec_ and base64") from None
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + raw, hashlib.sha256).digest()
    expected = base64.b64encode(mac).decode()
    for sig in signatures.split():
        version, _, value = sig.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return json.loads(raw)
    raise WebhookVerificationError("no signature matches")
