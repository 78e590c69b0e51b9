"""Response formats and caching shared by every endpoint.

List envelope (JSON): ``{"snapshot_id", "total", "limit", "offset", "next", "hint", "rows"}``.
``format=csv|ndjson|parquet`` (or ``Accept``) returns the rows alone in that format.
Every response carries an ``ETag`` from the snapshot id and the query, ``Cache-Control`` and
``Last-Modified``; ``If-None-Match`` with the same ETag gets a 304.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections import OrderedDict
from collections.abc import Iterator
from datetime import date, datetime
from email.utils import format_datetime
from enum import StrEnum

import orjson
from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from api.snapshot import Opened
from warehouse.exceptions import SnapshotError


class Format(StrEnum):
    json = "json"
    csv = "csv"
    ndjson = "ndjson"
    parquet = "parquet"


MEDIA = {Format.json: "application/json", Format.csv: "text/csv; charset=utf-8",
         Format.ndjson: "application/x-ndjson", Format.parquet: "application/vnd.apache.parquet"}


def pick_format(request: Request, fmt: Format | None) -> Format:
    """``format=`` wins; otherwise the Accept header; otherwise JSON."""
    return fmt if fmt is not None else accepted_format(request.headers.get("accept", ""))


def accepted_format(accept: str) -> Format:
    """The format an ``Accept`` header asks for (JSON unless it names another)."""
    for f in (Format.csv, Format.ndjson, Format.parquet):
        if MEDIA[f].split(";")[0] in accept:
            return f
    return Format.json


def refuses_gzip(value: bytes) -> bool:
    """``Accept-Encoding`` names gzip with ``q=0`` (RFC 9110: "not acceptable")."""
    for part in value.decode("latin-1").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "x-gzip"):
            q = params.replace(" ", "").lower()
            return q.startswith("q=") and q[2:].rstrip("0.") == "" and q[2:] != ""
    return False


def _plain(value: object) -> object:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _finite(obj: object) -> object:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def dumps(obj: object) -> bytes:
    """JSON bytes (dates as ISO 8601, non-finite floats as null). orjson does the work; what it
    refuses (integers beyond 64 bits, non-string keys) goes through the standard library."""
    try:
        return orjson.dumps(obj, default=_plain)
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        return json.dumps(obj, default=_plain, separators=(",", ":"), allow_nan=False).encode()
    except ValueError:  # an overflowed figure somewhere inside: say null, not Infinity
        return json.dumps(_finite(obj), default=_plain, separators=(",", ":"),
                          allow_nan=False).encode()


def _clean(rows: list[dict]) -> list[dict]:
    return [{k: _plain(v) for k, v in r.items()} for r in rows]


def encode_row(row: dict, columns: list[str]) -> bytes:
    """One row as it appears in a JSON envelope (the columns in order)."""
    return dumps({c: _plain(row.get(c)) for c in columns})


def etag_for(request: Request, opened: Opened) -> str:
    """A weak ETag from everything the body depends on: the snapshot id, the path, the query
    as sent (the order of repeated parameters is significant: ``sort=a&sort=b`` is not
    ``sort=b&sort=a``) and the format ``Accept`` negotiates (as the response cache keys it: two
    Accept headers asking for CSV share one tag). Weak, since the gzip middleware sends the
    same representation compressed or not under it (RFC 9110 8.8.1: a strong tag names one
    exact byte sequence). Links in a body are built from the configured public URL, never
    from the Host header, so no header can make one client's body differ from another's."""
    key = "\x1f".join([opened.id or "empty", request.url.path, request.url.query,
                       accepted_format(request.headers.get("accept", "")).value])
    return 'W/"' + hashlib.sha256(key.encode()).hexdigest()[:32] + '"'


def public_link(request: Request, **params: object) -> str:
    """This request's URL with ``params`` set, at the configured public URL (the Host header
    is never trusted for links)."""
    from urllib.parse import urlsplit

    base = urlsplit(request.app.state.settings.public_url)
    url = request.url.include_query_params(**params)
    return str(url.replace(scheme=base.scheme, netloc=base.netloc,
                           path=base.path.rstrip("/") + url.path))


def cache_headers(request: Request, opened: Opened, max_age: int) -> dict[str, str]:
    """ETag, Cache-Control and Last-Modified for a response from this snapshot."""
    headers = {"ETag": etag_for(request, opened), "Cache-Control": f"public, max-age={max_age}",
               "Vary": "Accept"}  # the gzip middleware adds Accept-Encoding when it compresses
    if opened.published_at is not None:
        headers["Last-Modified"] = format_datetime(opened.published_at, usegmt=True)
    if opened.id:
        headers["X-Snapshot-Id"] = opened.id
    return headers


def _opaque(tag: str) -> str:
    return tag.strip().removeprefix("W/")


def not_modified(request: Request, headers: dict[str, str]) -> Response | None:
    """A 304 when the client already holds this representation: ``If-None-Match`` compared
    weakly (RFC 9110: ``W/"x"`` matches ``"x"``, so a compressing proxy keeps revalidation),
    or, without it, ``If-Modified-Since`` at or after the snapshot's publish time."""
    inm = request.headers.get("if-none-match")
    if inm:
        ours = _opaque(headers["ETag"])
        if inm.strip() == "*" or ours in [_opaque(t) for t in inm.split(",")]:
            return Response(status_code=304, headers=headers)
        return None
    ims, modified = request.headers.get("if-modified-since"), headers.get("Last-Modified")
    if ims and modified:
        from email.utils import parsedate_to_datetime

        try:
            if parsedate_to_datetime(ims) >= parsedate_to_datetime(modified):
                return Response(status_code=304, headers=headers)
        except (TypeError, ValueError):
            return None
    return None


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # OWASP "CSV Injection"
# The request headers a recorded answer depends on (the response cache's key).
KEYED_HEADERS = (b"accept", b"accept-encoding", b"origin", b"if-none-match")


def _cell(value: object, escape: bool) -> object:
    """A CSV cell: empty for NULL; ``true``/``false`` for a boolean, as JSON and SQL spell it
    (not Python's True/False); a text that a spreadsheet would run as a formula gets a
    leading apostrophe (shown as text) when ``escape``; numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    value = _plain(value)
    if escape and isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _csv_stream(rows: list[dict], columns: list[str], escape: bool = True) -> Iterator[str]:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(columns)
    for i, row in enumerate(rows):
        writer.writerow([_cell(row.get(c), escape) for c in columns])
        if i % 500 == 499:
            yield buf.getvalue()
            buf.seek(0)
            buf.truncate()
    yield buf.getvalue()


class HeadAsGet:
    """ASGI middleware: HEAD on any GET route answers as GET would, headers only (RFC 9110)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message) -> None:
            if message["type"] == "http.response.body":
                if not message.get("more_body"):
                    await send({"type": "http.response.body", "body": b""})
                return
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


def mark_cacheable(request: Request) -> None:
    """Say that this request's answer depends on the snapshot and the request alone (list
    pages, snapshot-only items: never the run journal, health or errors), so the response
    cache may keep it."""
    request.state.cacheable = True


# What one recorded answer costs besides its bytes: the key (a 16-byte digest), the entry's
# tuple and the ASGI start message's objects (measured with sys.getsizeof, rounded up).
ENTRY_OVERHEAD = 512


class ResponseCache:
    """The one response cache, a raw ASGI layer in front of the whole application
    (``PerfledgerAPI``): a GET (or HEAD) whose exact answer was recorded for the current
    snapshot is replayed from memory before any middleware, routing or parameter parsing runs.
    A snapshot never changes, so a recorded answer stays right until the next snapshot, when
    everything recorded is dropped.

    The key is a digest (``request_key``) of what a response can depend on, normalised: the
    snapshot id, the path, the query as sent, the format ``Accept`` asks for, whether gzip is
    accepted, ``Origin`` when it is one CORS allows (``origins``) and ``If-None-Match``; no
    header value is kept, so a long header or query costs no memory. A response is recorded
    only when its route called ``mark_cacheable`` and it is a 200 or a 304; what is replayed is
    the final bytes the application sent (gzip included), so a replayed answer is
    byte-identical to a computed one. A request with ``If-Modified-Since`` and anything not a
    plain GET/HEAD go to the application. Every byte an entry holds (body, headers, key and
    ``ENTRY_OVERHEAD``) counts against ``max_bytes`` (``PERFLEDGER_API_RESPONSE_CACHE_MB``),
    least recently used out first, and no answer over a quarter of it (or 4 MiB) is kept; 0
    turns the cache off."""

    def __init__(self, app, reader, max_bytes: int, origins: list[str] | None = None) -> None:
        self.app, self.reader, self.max_bytes = app, reader, max_bytes
        self.origins = {o.encode("latin-1") for o in origins or []}
        self._items: OrderedDict[bytes, tuple[dict, bytes, int]] = OrderedDict()
        self._snapshot: str | None = None
        self.bytes = 0

    async def __call__(self, scope, receive, send) -> None:
        key = self.key(scope) if self.max_bytes > 0 else None
        if key is None:
            await self.app(scope, receive, send)
        elif not await self.replay(key, scope, send):
            scope.setdefault("state", {})  # shared with the route's request.state
            await self.app(scope, receive, self.recorder(key, scope, send))

    def key(self, scope) -> bytes | None:
        """The request's key, or None when it must go to the application."""
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD") \
                or any(name == b"if-modified-since" for name, _ in scope["headers"]):
            return None
        try:
            opened = self.reader.get()
        except SnapshotError:  # nothing readable: the application answers (503, or health)
            return None
        if opened.id != self._snapshot:  # a new snapshot: nothing recorded still holds
            self._items, self.bytes = OrderedDict(), 0
            self._snapshot = opened.id
        keyed = [name for name, _ in scope["headers"] if name in KEYED_HEADERS]
        if len(keyed) != len(set(keyed)):  # a header sent twice: the app reads the first, a
            return None  # key the last; such a request is answered, never recorded
        return self.request_key(opened.id, scope["path"], scope["query_string"],
                                scope["headers"])

    def request_key(self, snapshot_id: str | None, path: str, query: bytes,
                    headers: list[tuple[bytes, bytes]]) -> bytes:
        """The 16-byte digest of a request as far as its answer depends on it."""
        found = {name: value for name, value in headers if name in KEYED_HEADERS}
        encoding = found.get(b"accept-encoding", b"")
        origin = found.get(b"origin")
        parts = (str(snapshot_id).encode(), path.encode("utf-8", "surrogateescape"), query,
                 accepted_format(found.get(b"accept", b"").decode("latin-1")).value.encode(),
                 b"gzip" if b"gzip" in encoding and not refuses_gzip(encoding) else b"",
                 origin if origin in self.origins else b"-" if origin is not None else b"",
                 found.get(b"if-none-match", b""))
        digest = hashlib.blake2b(digest_size=16)
        for part in parts:  # each part length-prefixed: no two requests share a byte stream
            digest.update(len(part).to_bytes(8, "big") + part)
        return digest.digest()

    async def replay(self, key: bytes, scope, send) -> bool:
        hit = self._items.get(key)
        if hit is None:
            return False
        self._items.move_to_end(key)
        start, body, _ = hit
        await send(start)
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})
        return True

    def recorder(self, key: bytes, scope, send):
        """``send`` that also records the response under ``key`` when it may be replayed."""
        if scope["method"] != "GET":
            return send
        state: dict = {}

        async def record(message) -> None:
            if message["type"] == "http.response.start":
                state["start"] = message
            elif message["type"] == "http.response.body":
                state.setdefault("chunks", []).append(message.get("body", b""))
                if not message.get("more_body") and "start" in state:
                    self._keep(key, scope, state["start"], b"".join(state["chunks"]))
            await send(message)

        return record

    def _keep(self, key: bytes, scope, start: dict, body: bytes) -> None:
        size = len(key) + len(body) + ENTRY_OVERHEAD + sum(
            len(k) + len(v) for k, v in start.get("headers", []))
        if start["status"] not in (200, 304) or not scope["state"].get("cacheable") \
                or size > min(4 * 2**20, self.max_bytes // 4) or key in self._items:
            return
        while self._items and self.bytes + size > self.max_bytes:
            self.bytes -= self._items.popitem(last=False)[1][2]
        self._items[key] = (start, body, size)
        self.bytes += size


def list_response(request: Request, opened: Opened, *, total: int, rows: list[dict],
                  columns: list[str], limit: int, offset: int, fmt: Format | None,
                  max_age: int, hint: str | None = None, arrow=None,
                  headers: dict[str, str] | None = None, csv_escape: bool = True,
                  encoded: list[str] | None = None) -> Response:
    """The list envelope (with ``hint`` saying why nothing matched, when nothing did), or the
    rows as CSV / NDJSON / Parquet (from ``arrow``, the page as the database typed it, when
    given). ``headers``: this response's ``cache_headers``, when the caller has them and has
    already answered a revalidation (``not_modified``). ``csv_escape``: CSV text cells that
    would run as spreadsheet formulas get a leading apostrophe. ``encoded``: the page's rows
    already as JSON (``encode_row``, from a serving table), for the envelope."""
    if headers is None:
        headers = cache_headers(request, opened, max_age)
        cached = not_modified(request, headers)
        if cached is not None:
            return cached
    headers = dict(headers)
    f = pick_format(request, fmt)
    nxt = None
    if offset + limit < total:
        nxt = public_link(request, offset=offset + limit, limit=limit)
        headers["Link"] = f'<{nxt}>; rel="next"'  # every format can page, CSV included
    if f is not Format.json:
        headers["X-Total-Count"] = str(total)
    if f is Format.csv and len(rows) > 1000:
        return StreamingResponse(_csv_stream(rows, columns, csv_escape), media_type=MEDIA[f],
                                 headers=headers)
    if f is Format.csv:
        return Response("".join(_csv_stream(rows, columns, csv_escape)).encode(),
                        media_type=MEDIA[f],
                        headers=headers)
    if f is Format.ndjson:
        return Response(b"".join(dumps(r) + b"\n" for r in rows), media_type=MEDIA[f],
                        headers=headers)
    if f is Format.parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = arrow if arrow is not None else (
            pa.Table.from_pylist(rows) if rows else pa.table({c: [] for c in columns}))
        out = io.BytesIO()
        pq.write_table(table, out)
        return Response(out.getvalue(), media_type=MEDIA[f], headers=headers)
    envelope = {"snapshot_id": opened.id, "total": total, "limit": limit, "offset": offset,
                "next": nxt, "hint": hint, "rows": [] if encoded is not None else _clean(rows)}
    body = dumps(envelope)
    if encoded is not None:  # "rows":[] is the envelope's last member
        body = body[:-2] + ",".join(encoded).encode() + b"]}"
    return Response(body, media_type=MEDIA[Format.json], headers=headers)


def item_response(request: Request, opened: Opened, payload: dict, max_age: int, *,
                  journal: bool = False) -> Response:
    """A single object: ``{"snapshot_id", ...payload}`` with the cache headers. A ``journal``
    payload (the refresh runs, health) changes without a new snapshot: its ETag is its body's
    digest and it has no Last-Modified, so a revalidation sees a failed refresh."""
    headers = cache_headers(request, opened, max_age)
    body = dumps({"snapshot_id": opened.id, **payload})
    if journal:
        headers["ETag"] = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        headers.pop("Last-Modified", None)
    cached = not_modified(request, headers)
    if cached is not None:
        return cached
    return Response(body, media_type=MEDIA[Format.json], headers=headers)
