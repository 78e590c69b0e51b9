"""ASGI layers every request passes: a bound on the request line, the client's ``q=0`` for
gzip honoured, and the security headers every response carries."""

from __future__ import annotations

from api.errors import error_body
from api.responses import dumps, refuses_gzip

# Longer query strings are refused before routing, below the smaller of uvicorn's two parsers'
# own limits (h11 reads at most 16 KiB of request line and headers): every real query is far
# shorter. Within it, each repeatable parameter is counted (``api.params.MAX_VALUES``).
MAX_QUERY_BYTES = 15 * 1024

# Sent with every response unless the route set its own (the docs pages do). The explorer loads
# only its own scripts and styles; Plotly adds inline style elements, hence 'unsafe-inline'
# for styles (never for scripts).
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
     b"img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; "
     b"base-uri 'self'; form-action 'self'"),
]


class RequestGuard:
    """Refuses an over-long query string (414, the one error shape) and drops ``gzip`` from an
    ``Accept-Encoding`` that gives it ``q=0``, so the gzip layer sends identity."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if len(scope.get("query_string", b"")) > MAX_QUERY_BYTES:
            body = dumps(error_body(414, f"the query string is longer than {MAX_QUERY_BYTES} "
                                         "bytes; ask for fewer values at a time"))
            await send({"type": "http.response.start", "status": 414, "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        headers = scope["headers"]
        if any(k == b"accept-encoding" and refuses_gzip(v) for k, v in headers):
            scope = {**scope, "headers": [(k, v) for k, v in headers if k != b"accept-encoding"]
                     + [(b"accept-encoding", b"identity")]}
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Adds ``SECURITY_HEADERS`` to every response that does not set them itself."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in have]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)
