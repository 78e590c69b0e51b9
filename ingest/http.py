"""The shared HTTP client and the one fetch path every source uses.

``fetch_bytes`` reads ``http(s)://`` URLs through an ``httpx.Client`` passed in by the caller
(tests swap its transport, never this code), and ``file://`` URLs or plain paths from disk.
Retries (tenacity) cover connect errors, timeouts, truncated bodies, 429 and 5xx, with
exponential backoff that honours ``Retry-After``. Conditional requests use ETag/Last-Modified.

What a server may make a fetch do is bounded by the source's ``FetchLimits``:
- a redirect hop is checked before it is sent (an httpx request event hook, which httpx calls
  for every hop): only http/https, only to the configured URL's origin or a host the source
  allows, never to a link-local or cloud-metadata address, never from a public host to a
  private or loopback one (the hop's host is resolved and every address checked);
- a body is counted as it is decoded: past ``max_bytes``, or inflating more than
  ``max_inflation`` times the bytes on the wire, the fetch stops with ``FetchRefused``.
"""

from __future__ import annotations

import email.utils
import hashlib
import ipaddress
import socket
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

from warehouse.exceptions import FetchError, FetchRefused
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

    def same_as(self, prev: dict | None) -> bool:
        """Whether this fetch brings the bytes of ``prev`` (the source snapshot last recorded
        for the same request): a 304, or the same sha256. Whether they must be read again
        (a newer parser) is ``LoadContext.to_parse``'s question."""
        return self.not_modified or bool(prev and prev["sha256"] == self.sha256)


DEFAULT_MAX_BYTES = 32 * 2**20  # the real files are a few MB at most; Azure pages ~60 KB
DEFAULT_MAX_INFLATION = 100.0  # gzip'd JSON/CSV inflates 5-20x; a bomb of zeros about 1000x
INFLATION_FLOOR = 2**20  # bodies smaller than this are never refused for their ratio


@dataclass(frozen=True)
class FetchLimits:
    """What a source's server may make a fetch do: hosts (``host`` or ``host:port``) a
    redirect may go to besides the configured URL's origin, the largest decoded body, and how
    many times its size on the wire a body may inflate to."""

    allowed_redirect_hosts: tuple[str, ...] = ()
    max_bytes: int = DEFAULT_MAX_BYTES
    max_inflation: float = DEFAULT_MAX_INFLATION


DEFAULT_LIMITS = FetchLimits()

# Cloud instance-metadata services outside 169.254.0.0/16 and fe80::/10 (both refused whole).
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "fd00:ec2::254",     # AWS IMDS over IPv6
    "100.100.100.200",   # Alibaba Cloud
    "168.63.129.16",     # Azure wire server
))
_EXTENSION = "perfledger.redirects"  # request extension carrying a fetch's redirect policy


class _Refused(Exception):
    """Raised inside httpx (from the request hook) or ``_get``; ``fetch_bytes`` turns it into
    ``FetchRefused`` with the source and URL."""


@dataclass
class _Hops:
    """One request's redirect policy, carried in its extensions (httpx copies a request's
    extensions onto each redirect it builds), so a shared client serves every source."""

    start: httpx.URL
    allowed: tuple[str, ...]
    first: bool = True
    start_public: bool | None = None


def _port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def _addresses(host: str, port: int) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every address ``host`` resolves to (IPv4-mapped IPv6 unwrapped); empty if none."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return set()
    out: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        out.add(ip)
    return out


def hop_refusal(start: httpx.URL, hop: httpx.URL, allowed: tuple[str, ...] = (),
                start_public: bool | None = None) -> str | None:
    """Why a redirect from a fetch of ``start`` may not go to ``hop``, or None if it may.
    ``start_public`` (whether ``start``'s host resolves to public addresses only) is worked
    out when not given."""
    if hop.scheme not in ("http", "https"):
        return f"{hop.scheme or 'no'} scheme (only http and https are followed)"
    host = hop.host.lower()
    same_origin = (hop.scheme, host, _port(hop)) == (start.scheme, start.host.lower(),
                                                     _port(start))
    names = {a.strip().lower() for a in allowed}
    if not (same_origin or host in names or f"{host}:{_port(hop)}" in names):
        return (f"{host}:{_port(hop)} is neither the configured origin "
                f"({start.scheme}://{start.host}:{_port(start)}) nor in this source's "
                "allowed_redirect_hosts in sources.toml")
    addresses = _addresses(host, _port(hop))  # none: the connection fails on its own
    for ip in sorted(addresses, key=str):
        if ip.is_link_local or ip in METADATA_ADDRESSES or ip.is_unspecified or ip.is_multicast:
            return f"{host} is a link-local or cloud-metadata address ({ip})"
    if start_public is None:
        start_addresses = _addresses(start.host, _port(start))
        start_public = bool(start_addresses) and all(a.is_global for a in start_addresses)
    private = sorted((ip for ip in addresses if not ip.is_global), key=str)
    if start_public and private:
        kind = "loopback" if private[0].is_loopback else "private"
        return f"{host} is a {kind} address ({private[0]}) and {start.host} is public"
    return None


def _check_hop(request: httpx.Request) -> None:
    """httpx request event hook: refuse a redirect hop the fetch's policy does not allow,
    before it is sent. The first request of a fetch is the configured URL itself."""
    hops = request.extensions.get(_EXTENSION)
    if not isinstance(hops, _Hops):
        return
    if hops.first:
        hops.first = False
        return
    why = hop_refusal(hops.start, request.url, hops.allowed, hops.start_public)
    if why is not None:
        raise _Refused(f"redirect to {redact(str(request.url))} refused: {why}")


def _drop_redirect_body(response: httpx.Response) -> None:
    """httpx response event hook: a redirect's body is never read. httpx reads it whole before
    following the next hop, so a 302 could carry any size (or a gzip bomb); its stream is
    closed unread and replaced by an empty one before httpx gets to it."""
    if response.has_redirect_location:
        stream = response.stream
        if isinstance(stream, httpx.SyncByteStream):  # the sync client's (ours)
            stream.close()
        response.stream = httpx.ByteStream(b"")
        for name in ("content-encoding", "content-length"):
            response.headers.pop(name, None)


def make_client(timeout: float = 30.0,
                transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The client every source shares: timeouts, User-Agent, redirects followed (each hop
    checked by ``_check_hop``). Tests pass a ``transport`` (httpx's own extension point);
    nothing else sends around httpx."""
    return httpx.Client(timeout=httpx.Timeout(timeout), headers={"User-Agent": USER_AGENT},
                        follow_redirects=True, transport=transport,
                        event_hooks={"request": [_check_hop],
                                     "response": [_drop_redirect_body]})


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


def _read_local(source: str, url: str, limits: FetchLimits) -> Raw:
    path = Path(unquote(urlsplit(url).path)) if url.startswith("file://") else Path(url)
    try:
        size = path.stat().st_size
        if size > limits.max_bytes:
            raise FetchRefused(f"{source}: {path} is {_mib(size)}, more than the "
                               f"{_mib(limits.max_bytes)} a body may be (max_body_mb)",
                               source=source, url=str(path))
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


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{int(n)} bytes"


def _get(client: httpx.Client, url: str, headers: dict[str, str],
         deadline: float | None, limits: FetchLimits = DEFAULT_LIMITS) -> _Reply:
    """One GET through httpx, its (decoded) body read chunk by chunk so that a server that
    trickles past ``deadline`` fails however steadily it sends, and a body past
    ``limits.max_bytes`` decoded, or inflating past ``limits.max_inflation`` times what came
    over the wire, stops as soon as it does (httpx decodes one network read, at most 64 KiB,
    at a time: memory grows by at most that read's inflation before the check)."""
    if _check_hop not in client.event_hooks["request"]:  # a client not made by make_client
        client.event_hooks = {**client.event_hooks,
                              "request": [*client.event_hooks["request"], _check_hop],
                              "response": [*client.event_hooks["response"],
                                           _drop_redirect_body]}
    hops = _Hops(httpx.URL(url), limits.allowed_redirect_hosts)
    with client.stream("GET", url, headers=headers, extensions={_EXTENSION: hops}) as response:
        if response.status_code == 429 or response.status_code >= 500:
            raise _RetryableStatus(response.status_code, response.headers)
        codings = [c.strip().lower() for v in response.headers.get_list("content-encoding")
                   for c in v.split(",") if c.strip().lower() not in ("", "identity")]
        if len(codings) > 1:  # a compressed body compressed again inflates beyond any check
            raise _Refused(f"the body is encoded {len(codings)} times over "
                           f"({', '.join(codings)}); one content encoding is accepted")
        out = []
        total = 0
        for chunk in response.iter_bytes():
            total += len(chunk)
            if total > limits.max_bytes:
                raise _Refused(f"the body is larger than the {_mib(limits.max_bytes)} a body "
                               "may be (max_body_mb); it was not read further")
            wire = response.num_bytes_downloaded
            if total > INFLATION_FLOOR and total > limits.max_inflation * max(wire, 1):
                raise _Refused(f"the body inflates more than {limits.max_inflation:g}x "
                               f"({_mib(wire)} sent decoded to over {_mib(total)}; a "
                               "decompression bomb?); it was not read further")
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
    limits: FetchLimits = DEFAULT_LIMITS,
    sleep=time.sleep,
) -> Raw:
    """GET one URL (or read one file) and return its bytes, or a 304 ``Raw`` with no body.

    ``deadline`` (a ``time.monotonic()`` instant) bounds the whole fetch, retries and waits
    included: the body is read in chunks and a server that trickles past it fails the fetch
    ("deadline exceeded after N s") however steadily it sends. Raises ``FetchError`` naming the
    source and the (redacted) URL once retries are used up, and ``FetchRefused`` (not retried)
    for a redirect or a body ``limits`` refuses.
    """
    if not url.startswith(("http://", "https://")):
        return _read_local(source, url, limits)

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
        return _get(client, url, headers, deadline, limits)

    try:
        reply = _retrying(policy, deadline, sleep)(attempt)
    except (_DeadlineExceeded, _Refused, _RetryableStatus, httpx.TransportError,
            httpx.DecodingError, httpx.TooManyRedirects) as e:
        raise _failure(e, source, url, attempts, started) from None
    if reply.status == 304:
        return Raw(source=source, url=url, body=b"", fetched_at=datetime.now(UTC), status=304,
                   etag=etag, last_modified=last_modified, attempts=attempts)
    if reply.status >= 400:
        shown = redact(url)
        raise FetchError(
            f"{source}: {shown} answered HTTP {reply.status}",
            source=source, url=shown, status=reply.status,
        )
    return Raw(source=source, url=reply.url, body=reply.body, fetched_at=datetime.now(UTC),
               status=reply.status, etag=reply.headers.get("ETag"),
               last_modified=reply.headers.get("Last-Modified"), attempts=attempts)


def _retrying(policy: RetryPolicy, deadline: float | None, sleep) -> Retrying:
    """Attempts under ``policy``: retryable failures only, none started after ``deadline``."""
    stop: stop_base = stop_after_attempt(policy.retries + 1)
    if deadline is not None:  # no new attempt once the deadline has passed
        stop = stop | stop_after_delay(max(0.0, deadline - time.monotonic()))
    return Retrying(
        stop=stop,
        wait=_wait(policy, deadline),
        retry=retry_if_exception(_is_retryable),
        sleep=sleep,
        reraise=True,
    )


def _failure(e: Exception, source: str, url: str, attempts: int, started: float) -> FetchError:
    """The project error for a fetch that failed with ``e`` after ``attempts`` attempts."""
    shown = redact(url)
    if isinstance(e, _DeadlineExceeded):
        return FetchError(
            f"{source}: {shown}: deadline exceeded after {time.monotonic() - started:.0f} s "
            f"({attempts} attempt(s))", source=source, url=shown)
    if isinstance(e, _Refused):
        return FetchRefused(f"{source}: {shown}: {e}", source=source, url=shown)
    if isinstance(e, _RetryableStatus):
        return FetchError(
            f"{source}: {shown} answered HTTP {e.status} after {attempts} attempt(s)",
            source=source, url=shown, status=e.status,
        )
    if isinstance(e, httpx.TransportError):
        return FetchError(
            f"{source}: {shown} failed after {attempts} attempt(s): "
            f"{type(e).__name__}: {redact_text(str(e))}",
            source=source, url=shown,
        )
    # a decoding error or too many redirects: not retried, it would recur
    return FetchError(f"{source}: {shown}: {redact_text(str(e))}", source=source, url=shown)
