"""The shared HTTP client and the one fetch path every source uses.

``fetch_bytes`` reads ``http(s)://`` URLs through an ``httpx.Client`` passed in by the caller
(tests swap its transport, never this code), and ``file://`` URLs or plain paths from disk.
Retries (tenacity) cover connect errors, timeouts, truncated bodies, 429 and 5xx, with
exponential backoff that honours ``Retry-After``. Conditional requests use ETag/Last-Modified.
"""

from __future__ import annotations

import email.utils
import hashlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
)
from tenacity.stop import stop_base

from warehouse.exceptions import FetchError
from warehouse.redact import redact, redact_text

USER_AGENT = "perfledger/0.1 (+https://github.com/perfledger; LLM-inference evidence warehouse)"


def resolve_url(base_dir: Path, url: str) -> str:
    """A URL as given, or a plain path made absolute against ``base_dir`` (the sources file's
    directory)."""
    if "://" in url:
        return url
    p = Path(url)
    return str(p if p.is_absolute() else (base_dir / p).resolve())


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: attempts after the first, first backoff, longest single wait."""

    retries: int = 3
    backoff: float = 0.5
    max_wait: float = 30.0


DEFAULT_POLICY = RetryPolicy()


@dataclass
class Raw:
    """Bytes fetched from a source, with the HTTP metadata that says what they are."""

    source: str
    url: str
    body: bytes
    fetched_at: datetime
    status: int = 200
    etag: str | None = None
    last_modified: str | None = None
    attempts: int = 1

    @cached_property
    def sha256(self) -> str:
        """Hex sha256 of the body: the content address in the raw store (computed once; the
        body is not changed after a fetch)."""
        return hashlib.sha256(self.body).hexdigest()

    @property
    def not_modified(self) -> bool:
        """True when the server answered 304 to a conditional request."""
        return self.status == 304


def make_client(timeout: float = 30.0,
                transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The client every source shares: timeouts, User-Agent, redirects followed. Tests pass a
    ``transport`` (httpx's own extension point); nothing else sends around httpx."""
    return httpx.Client(timeout=httpx.Timeout(timeout), headers={"User-Agent": USER_AGENT},
                        follow_redirects=True, transport=transport)


class _RetryableStatus(Exception):
    def __init__(self, status: int, headers: httpx.Headers) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.headers = headers


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, (_RetryableStatus, httpx.TransportError))


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("Retry-After")
    if not value:
        return None
    if value.strip().isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _wait(policy: RetryPolicy, deadline: float | None = None):
    def wait(state: RetryCallState) -> float:
        backoff = policy.backoff * (2 ** (state.attempt_number - 1))
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _RetryableStatus):
            hinted = _retry_after(exc.headers)
            if hinted is not None:
                backoff = hinted
        if deadline is not None:
            backoff = min(backoff, max(0.0, deadline - time.monotonic()))
        return min(backoff, policy.max_wait)

    return wait


def _read_local(source: str, url: str) -> Raw:
    path = Path(unquote(urlsplit(url).path)) if url.startswith("file://") else Path(url)
    try:
        body = path.read_bytes()
    except OSError as e:
        raise FetchError(f"{source}: cannot read {path}: {e.strerror}", source=source,
                         url=str(path)) from e
    return Raw(source=source, url=url, body=body, fetched_at=datetime.now(UTC))


class _DeadlineExceeded(Exception):
    pass


@dataclass
class _Reply:
    status: int
    headers: httpx.Headers
    body: bytes
    url: str


def _get(client: httpx.Client, url: str, headers: dict[str, str],
         deadline: float | None) -> _Reply:
    """One GET through httpx, its (decoded) body read chunk by chunk so that a server that
    trickles past ``deadline`` fails however steadily it sends."""
    with client.stream("GET", url, headers=headers) as response:
        if response.status_code == 429 or response.status_code >= 500:
            raise _RetryableStatus(response.status_code, response.headers)
        out = []
        for chunk in response.iter_bytes():
            out.append(chunk)
            if deadline is not None and time.monotonic() > deadline:
                raise _DeadlineExceeded
    return _Reply(response.status_code, response.headers, b"".join(out), str(response.url))


def fetch_bytes(
    client: httpx.Client,
    url: str,
    *,
    source: str,
    policy: RetryPolicy = DEFAULT_POLICY,
    etag: str | None = None,
    last_modified: str | None = None,
    deadline: float | None = None,
    sleep=time.sleep,
) -> Raw:
    """GET one URL (or read one file) and return its bytes, or a 304 ``Raw`` with no body.

    ``deadline`` (a ``time.monotonic()`` instant) bounds the whole fetch, retries and waits
    included: the body is read in chunks and a server that trickles past it fails the fetch
    ("deadline exceeded after N s") however steadily it sends. Raises ``FetchError`` naming the
    source and the (redacted) URL once retries are used up.
    """
    if not url.startswith(("http://", "https://")):
        return _read_local(source, url)

    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified

    attempts = 0
    started = time.monotonic()

    def attempt() -> _Reply:
        nonlocal attempts
        attempts += 1
        if deadline is not None and time.monotonic() >= deadline:
            raise _DeadlineExceeded
        return _get(client, url, headers, deadline)

    stop: stop_base = stop_after_attempt(policy.retries + 1)
    if deadline is not None:  # no new attempt once the deadline has passed
        stop = stop | stop_after_delay(max(0.0, deadline - time.monotonic()))
    retrying = Retrying(
        stop=stop,
        wait=_wait(policy, deadline),
        retry=retry_if_exception(_is_retryable),
        sleep=sleep,
        reraise=True,
    )
    try:
        reply = retrying(attempt)
    except _DeadlineExceeded:
        shown = redact(url)
        raise FetchError(
            f"{source}: {shown}: deadline exceeded after {time.monotonic() - started:.0f} s "
            f"({attempts} attempt(s))", source=source, url=shown) from None
    except _RetryableStatus as e:
        shown = redact(url)
        raise FetchError(
            f"{source}: {shown} answered HTTP {e.status} after {attempts} attempt(s)",
            source=source, url=shown, status=e.status,
        ) from None
    except httpx.TransportError as e:
        shown = redact(url)
        raise FetchError(
            f"{source}: {shown} failed after {attempts} attempt(s): "
            f"{type(e).__name__}: {redact_text(str(e))}",
            source=source, url=shown,
        ) from None
    except (httpx.DecodingError, httpx.TooManyRedirects) as e:  # not retried: it would recur
        shown = redact(url)
        raise FetchError(f"{source}: {shown}: {redact_text(str(e))}", source=source,
                         url=shown) from None
    if reply.status == 304:
        return Raw(source=source, url=url, body=b"", fetched_at=datetime.now(UTC), status=304,
                   etag=etag, last_modified=last_modified, attempts=attempts)
    if reply.status >= 400:
        shown = redact(url)
        raise FetchError(
            f"{source}: {shown} answered HTTP {reply.status}",
            source=source, url=shown, status=reply.status,
        )
    return Raw(
        source=source,
        url=reply.url,
        body=reply.body,
        fetched_at=datetime.now(UTC),
        status=reply.status,
        etag=reply.headers.get("ETag"),
        last_modified=reply.headers.get("Last-Modified"),
        attempts=attempts,
    )
