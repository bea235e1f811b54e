"""One HTTP exchange that ends by a deadline, however the server behaves.

urllib's ``timeout`` bounds each socket operation, not the exchange: a server that
sends a byte of its answer every second holds a reader for as long as it likes. Here
every socket operation (connecting, sending, each read of the status line, the headers
and the body) is given only the time left until the deadline, so the exchange as a
whole ends by it. urllib still does the rest (proxies from the environment, TLS).
"""

from __future__ import annotations

import functools
import http.client
import io
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Mapping, Optional, Tuple

from .errors import Timeout, TransportError

# How much of an error answer is read: its message is all the client keeps, and an
# error page may be large.
MAX_ERROR_BODY = 64 * 1024


def time_left(deadline: float) -> float:
    """The seconds until deadline (a time.monotonic() value); socket.timeout once it passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("the deadline passed")
    return left


class _Reader(io.RawIOBase):
    """A socket's reads, each given only the time left until the deadline. It reads
    through the socket's own file object, so that closing the socket waits for it as
    urllib expects (it closes the connection before the body is read)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> Optional[int]:
        self._sock.settimeout(time_left(self._deadline))
        return self._raw.readinto(b)

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _Socket:
    """A connected socket whose sends and reads end by the deadline; the rest is the
    socket's own."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode != "rb":
            return self._sock.makefile(mode, *args, **kwargs)
        return io.BufferedReader(_Reader(self._sock, self._deadline))

    def sendall(self, data: Any, *args: Any) -> None:
        # Since Python 3.5 a socket's timeout bounds a whole sendall.
        self._sock.settimeout(time_left(self._deadline))
        self._sock.sendall(data, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _Deadline:
    """Connects within the time left, then hands http.client a socket that keeps to
    the deadline (after TLS, for https)."""

    sock: Any
    timeout: Any

    def __init__(self, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._deadline = deadline

    def connect(self) -> None:
        self.timeout = time_left(self._deadline)
        super().connect()  # type: ignore[misc]
        self.sock = _Socket(self.sock, self._deadline)


class _HTTPConnection(_Deadline, http.client.HTTPConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    deadline = 0.0  # set for each exchange, on a handler of its own

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_HTTPConnection, deadline=self.deadline), req)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: a 3xx comes back as the answer (an HTTPError), so that the
    key and the request never go where a server points (urllib's own handler sends the
    Authorization header to any host, and turns a POST into a GET)."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> None:
        return None


def open_once(req: urllib.request.Request, timeout: float) -> Any:
    """urllib's urlopen without redirects (see _NoRedirect), for a streamed answer."""
    return urllib.request.build_opener(_NoRedirect).open(req, timeout=timeout)


_HANDLERS: Tuple[Any, ...] = (_HTTPHandler,)

if hasattr(http.client, "HTTPSConnection"):  # Python built with ssl

    class _HTTPSConnection(_Deadline, http.client.HTTPSConnection):
        pass

    class _HTTPSHandler(urllib.request.HTTPSHandler):
        deadline = 0.0

        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            conn = functools.partial(_HTTPSConnection, deadline=self.deadline)
            return self.do_open(conn, req, context=self._context)  # type: ignore[attr-defined]

    _HANDLERS += (_HTTPSHandler,)


def _opener(deadline: float) -> urllib.request.OpenerDirector:
    """urllib's opener (proxies from the environment, errors as HTTPError; no
    redirects) with connections that keep to deadline."""
    handlers = []
    for cls in _HANDLERS:
        h = cls()
        h.deadline = deadline
        handlers.append(h)
    return urllib.request.build_opener(*handlers, _NoRedirect)


def exchange(req: urllib.request.Request, deadline: float, what: str,
             seconds: float) -> Tuple[int, Mapping[str, str], bytes]:
    """Sends req and reads its whole answer by deadline: the status, headers and body of
    any status (an error answer's body up to MAX_ERROR_BODY bytes; a redirect is an
    answer, never followed). Raises Timeout when
    the deadline (``seconds`` after the call began) passes first, TransportError when
    there is no complete answer (refused, reset, cut short); ``what`` names the request
    in their messages."""
    try:
        try:
            res = _opener(deadline).open(req, timeout=time_left(deadline))
        except urllib.error.HTTPError as e:
            # An error answer is a response too; its body says what the error is.
            with e:
                return e.code, e.headers, e.read(MAX_ERROR_BODY)
        with res:
            return res.status, res.headers, res.read()
    except socket.timeout as e:
        raise Timeout(f"{what}: no complete answer within {seconds:g} s") from e
    except urllib.error.URLError as e:
        if isinstance(e.reason, socket.timeout):
            raise Timeout(f"{what}: no complete answer within {seconds:g} s") from e
        raise TransportError(f"{what}: {e.reason}") from e
    except http.client.IncompleteRead as e:
        raise TransportError(f"{what}: the answer was cut short after {len(e.partial)} bytes") from e
    except (OSError, http.client.HTTPException) as e:  # refused, reset, closed, not HTTP
        raise TransportError(f"{what}: {type(e).__name__}: {e}") from e

