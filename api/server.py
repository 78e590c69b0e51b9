"""How ``perfledger serve`` runs uvicorn: its options from the settings, and a bound on how long
a connection may sit without sending a whole request head.

uvicorn closes a kept-alive connection that stays idle after a response
(``timeout_keep_alive``), but it arms no timer for a connection that never sends a byte or
stops halfway through its request line and headers: such sockets stay open until the file
descriptors run out. ``BoundedHttpTools`` is uvicorn's own httptools protocol (passed through
uvicorn's ``http`` option, the documented way to choose the protocol class) with one timer more:
from the moment a connection opens, and from the first byte of each request, the request head
must be complete within ``api_header_timeout`` seconds or the connection is closed.
"""

from __future__ import annotations

import asyncio
import resource
from functools import cache

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from warehouse.settings import Settings


@cache
def header_timeout() -> float:
    """Seconds a request head may take (the worker's settings, read once per process)."""
    return Settings().api_header_timeout


class BoundedHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol; a connection whose request head is not complete within
    ``header_timeout()`` seconds (idle from the start, or half-sent) is closed.

    One timer per connection, not per request: a request only notes when its head began and
    when it was complete, and the connection's timer looks at that when it fires (every
    ``header_timeout()`` seconds, or when the head in progress would be overdue)."""

    _head_since: float | None = None  # when the head in progress began
    _watch: asyncio.TimerHandle | None = None

    def _check(self) -> None:
        self._watch = None
        if self.transport.is_closing():
            return
        limit, since = header_timeout(), self._head_since
        left = limit if since is None else since + limit - self.loop.time()
        if left <= 0:
            self.transport.close()
            return
        self._watch = self.loop.call_later(left, self._check)

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_since = self.loop.time()
        self._watch = self.loop.call_later(header_timeout(), self._check)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._head_since is None:
            self._head_since = self.loop.time()

    def on_headers_complete(self) -> None:
        self._head_since = None
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        super().connection_lost(exc)


def concurrency_limit(settings: Settings) -> int:
    """Connections and requests a worker takes at once before answering 503: the setting, or
    below this process's file-descriptor limit (64 kept for snapshots, logs and the rest)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = max(16, soft - 64) if soft != resource.RLIM_INFINITY else 10_000
    return min(settings.api_limit_concurrency or room, room)


def uvicorn_options(settings: Settings) -> dict:
    """The options ``perfledger serve`` gives uvicorn besides the app, host and port."""
    return {"workers": settings.api_workers, "log_level": "info",
            "access_log": settings.api_access_log, "proxy_headers": True,
            "forwarded_allow_ips": settings.api_forwarded_allow_ips,
            "timeout_graceful_shutdown": settings.api_shutdown_timeout,
            "timeout_keep_alive": settings.api_keep_alive_timeout,
            "limit_concurrency": concurrency_limit(settings),
            "http": "api.server:BoundedHttpTools"}
