"""The exceptions the client raises: one class per kind of failure an agent branches on.

Every answer of the API that is an error becomes an :class:`APIError` (or one of its
subclasses) carrying the API's stable ``code``, its ``message`` and ``details``.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import List, Mapping, Optional


class CredoError(Exception):
    """Anything the client raises."""


class TransportError(CredoError):
    """No answer from the server: it could not be reached, or the connection broke."""


class Timeout(TransportError):
    """No complete answer by the call's deadline, the client's ``timeout`` (or an
    episode not done within a wait's)."""


class InvalidResponse(CredoError):
    """An answer that is not the API's: a success whose body is not JSON, or not the
    shape its operation promises (a proxy's or another server's page, say). ``status``
    is its HTTP status. Not retried: asking again would get the same."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Redirected(InvalidResponse):
    """A redirect (3xx), which the client never follows, to another host or its own:
    following one would take the key, and the request, wherever the answer points (and
    a POST would come back a GET). ``location`` is where it pointed (None when not
    said). Give the client the API's own URL. Not retried."""

    def __init__(self, status: int, location: Optional[str], message: str) -> None:
        super().__init__(status, message)
        self.location = location


def redirected(status: int, headers: Mapping[str, str], what: str) -> Redirected:
    """The exception for a redirect answer to request ``what``."""
    location = headers.get("Location")
    where = f"to {location}" if location else "with no Location"
    return Redirected(status, location, f"{what}: the server answered {status}, a redirect {where}; the client follows "
                      "no redirect (it would take the key and the request there): give it the API's own URL")


class APIError(CredoError):
    """An error answer of the API: ``{"error": {"code", "message", "details"}}``.

    ``code`` is stable (branch on it); ``message`` is for people.
    """

    def __init__(self, status: int, code: str, message: str, details: Optional[List[str]] = None) -> None:
        super().__init__(f"{code}: {message} (HTTP {status})")
        self.status = status
        self.code = code
        self.message = message
        self.details: List[str] = list(details or [])


class InvalidRequest(APIError):
    """400: a parameter or the body is malformed or invalid."""


class Unauthorized(APIError):
    """401: no key where one is needed, or not a valid, unrevoked key."""


class Forbidden(APIError):
    """403: the scope is outside the key's prefixes, or the key lacks the right."""


class NotFound(APIError):
    """404: no such belief, episode, review item or scope visible to the key."""


class Refused(APIError):
    """409: the revision engine refused an operator's revision, a review item is
    already resolved or no longer applies, or a revision cannot be reverted (only the
    latest of a chain can)."""


class RateLimited(APIError):
    """429: over the key's rate limit. ``retry_after`` is the seconds to wait, if said."""

    def __init__(self, status: int, code: str, message: str, details: Optional[List[str]] = None,
                 retry_after: Optional[float] = None) -> None:
        super().__init__(status, code, message, details)
        self.retry_after = retry_after


class ServerError(APIError):
    """5xx: a server fault (``internal``), a model that did not answer
    (``embedding_failed``, ``model_failed``) or an API that is off (``api_disabled``)."""


_BY_STATUS = {400: InvalidRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Refused}


_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")


def retry_after_seconds(value: Optional[str], now: Optional[datetime] = None) -> Optional[float]:
    """The seconds a Retry-After header asks to wait: a number of seconds, or an HTTP
    date (``now`` is the time it is measured from); None when absent or neither."""
    if value is None:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        seconds = float(value)
        return seconds if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):  # Python 3.9 raises TypeError
        return None
    if when.tzinfo is None:  # an HTTP date is in GMT
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def api_error(status: int, headers: Mapping[str, str], body: bytes) -> APIError:
    """The exception for an error answer. A body that is not the API's error shape (a
    proxy's page, say) keeps its status, with code ``http_<status>``."""
    code, message, details = f"http_{status}", body.decode("utf-8", "replace").strip()[:200], None
    try:
        err = json.loads(body)["error"]
        code, message, listed = str(err["code"]), str(err["message"]), err.get("details")
        details = [str(d) for d in listed] if isinstance(listed, list) else None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        pass
    if not message:
        message = f"HTTP {status}"
    if status == 429:
        return RateLimited(status, code, message, details, retry_after_seconds(headers.get("Retry-After")))
    if status >= 500:
        return ServerError(status, code, message, details)
    return _BY_STATUS.get(status, APIError)(status, code, message, details)
