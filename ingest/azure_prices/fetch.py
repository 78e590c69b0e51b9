"""Azure Retail Prices API: walk every page of the GPU VM price list.

``fetch_pages`` follows ``NextPageLink`` page by page (each page's bytes are a ``Raw`` of their
own, stored in the raw store); a full page that comes back with no next link is continued with
``$skip`` and said in the notes (a known failure of the API).
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import orjson

from ingest.azure_prices.parse import SOURCE
from ingest.http import DEFAULT_LIMITS, DEFAULT_POLICY, FetchLimits, Raw, RetryPolicy, fetch_bytes
from warehouse.exceptions import FetchError
from warehouse.redact import redact

PAGE_SIZE = 100  # the API's page size; a page this full with no next link is suspicious
PROBE_PAGES = 3  # pages read one by one, and timed, before deciding whether to fetch ahead


def build_filter(base: str, regions: list[str]) -> str:
    """The OData filter: the configured scope, narrowed to regions when any are set."""
    if not regions:
        return base
    either = " or ".join(f"armRegionName eq '{r}'" for r in regions)
    return f"{base} and ({either})"


def _with_params(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update(params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))


_SKIP = re.compile(r"([?&](?:\$|%24)skip=)(\d+)(?=&|#|$)", re.IGNORECASE)


def _skip_of(url: str) -> int | None:
    """The ``$skip`` of a page link, when it has exactly one."""
    found = _SKIP.findall(url)
    return int(found[0][1]) if len(found) == 1 else None


def _with_skip(url: str, skip: int) -> str:
    """The same link with another ``$skip`` (the server's own spelling kept)."""
    return _SKIP.sub(lambda m: m.group(1) + str(skip), url, count=1)


def _link_and_count(body: bytes) -> tuple[str, int] | None:
    """``NextPageLink`` and ``Count`` read from the end of a page without building its items.

    The API writes both after ``Items``; ``{`` + the page from the last ``"NextPageLink"`` on is
    then a JSON object of its own (a key found inside an item would leave that item's closing
    brackets unmatched, and a quoted name in a string value is escaped). None when the page is
    not laid out so, or has no next link: the caller parses the whole page.
    """
    at = body.rfind(b'"NextPageLink"')
    if at < 0:
        return None
    try:
        tail = orjson.loads(b"{" + body[at:])
    except orjson.JSONDecodeError:
        return None
    link, count = tail.get("NextPageLink"), tail.get("Count")
    if isinstance(link, str) and link and isinstance(count, int) and not isinstance(count, bool):
        return link, count
    return None


def fetch_pages(client: httpx.Client, url: str, *, api_version: str, odata_filter: str,
                currency: str, policy: RetryPolicy = DEFAULT_POLICY, max_pages: int = 5000,
                notes: list[str] | None = None, concurrency: int = 1,
                walk: dict | None = None,
                deadline: Callable[[], float | None] = lambda: None,
                limits: FetchLimits = DEFAULT_LIMITS) -> Iterator[Raw]:
    """Yield every page of the price list, in order. Raises ``FetchError`` naming the page.

    Pages are whatever ``NextPageLink`` points at. With ``concurrency`` > 1, once a link is
    seen to be "this link with ``$skip`` = items so far", the next pages' links are predicted
    (the same link, ``$skip`` moved on by a page) and up to ``concurrency`` of them fetched
    ahead; a prefetched page is used only when the link actually read from the page before it
    is the predicted one (else the prefetches are dropped and the real link is followed), so
    the pages are the ones a sequential walk would read.

    Fetching ahead hides network latency and costs CPU (threads contend for the interpreter).
    The first ``PROBE_PAGES`` pages are read one by one and timed: only when they spent most
    of their time waiting (not computing) does the walk fetch ahead; against a server that
    answers in about the time a page takes to read, it stays one by one. ``walk`` (a dict)
    receives what was decided and measured. A page's items are not built here: its link and
    item count are read from its end (``_link_and_count``) when it can be. ``deadline`` gives,
    for each request as it starts, the instant it must be done by; ``limits`` bound each page's
    redirects and size.
    """
    notes = notes if notes is not None else []
    first = _with_params(url, {"api-version": api_version, "$filter": odata_filter,
                               "currencyCode": currency})
    walk = walk if walk is not None else {}
    walk.update(fetch_ahead=False, waiting_share=None)
    pages = _Walk(lambda target: fetch_bytes(client, target, source=SOURCE, policy=policy,
                                             deadline=deadline(), limits=limits))
    next_url: str | None = first
    seen_items = page = 0
    try:
        while next_url:
            page += 1
            if page > max_pages:
                raise FetchError(f"{SOURCE}: more than {max_pages} pages; raise max_pages in "
                                 "sources.toml if the price list really is that long",
                                 source=SOURCE, url=redact(url))
            raw = pages.read(next_url, page)
            yield raw
            if (step := _step(raw.body)) is None:
                return  # parse() reports the bad page with its number
            link, count = step
            seen_items += count
            if link:
                next_url = link
            elif count >= PAGE_SIZE:
                notes.append(f"page {page} was full ({count} items) but NextPageLink was "
                             f"empty; continued with $skip={seen_items}")
                next_url = _with_params(first, {"$skip": str(seen_items)})
            else:
                next_url = None
            if page == PROBE_PAGES and concurrency > 1:
                pages.decide(concurrency, walk)
            if pages.pool is not None and next_url and count and _skip_of(next_url) == seen_items:
                pages.ahead_of(next_url, seen_items, count)
    finally:
        pages.close()


def _step(body: bytes) -> tuple[str | None, int] | None:
    """A page's next link and item count, from its end when it can be; None when the page
    cannot be read."""
    fast = _link_and_count(body)
    if fast is not None:
        return fast
    try:
        page = orjson.loads(body)
        return page.get("NextPageLink"), len(page.get("Items") or [])
    except (ValueError, AttributeError, TypeError):
        return None


class _Walk:
    """Reads the pages: one by one and timed until the walk decides to fetch ahead, then from
    the pages fetched ahead whose predicted link is the real one."""

    def __init__(self, get: Callable[[str], Raw]) -> None:
        self.get = get
        self.ahead: deque[tuple[str, Future[Raw]]] = deque()
        self.pool: ThreadPoolExecutor | None = None
        self.concurrency = 1
        self.timed = [0.0, 0.0]  # seconds the one-by-one pages took, and spent waiting in them

    def read(self, target: str, page: int) -> Raw:
        """Page number ``page`` at ``target``: fetched ahead when predicted, else now."""
        if self.ahead and self.ahead[0][0] == target:
            job: Future[Raw] | None = self.ahead.popleft()[1]
        else:
            for _, dropped in self.ahead:
                dropped.cancel()
            self.ahead.clear()
            job = None
        try:
            return job.result() if job is not None else self._timed(target)
        except FetchError as e:
            detail = str(e).removeprefix(f"{SOURCE}: ")
            kept = {k: v for k, v in e.context.items() if k not in ("source", "url")}
            raise type(e)(f"{SOURCE}: page {page}: {detail}", source=SOURCE, url=e.url,
                          excerpt=e.excerpt, **{**kept, "page": page}) from None

    def _timed(self, target: str) -> Raw:
        wall, cpu = time.perf_counter(), time.thread_time()
        raw = self.get(target)
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        self.timed[0] += wall
        self.timed[1] += max(0.0, wall - cpu)
        return raw

    def decide(self, concurrency: int, walk: dict) -> None:
        """Fetch ahead from now on when the pages so far spent most of their time waiting."""
        if self.timed[0] <= 0:
            return
        walk["waiting_share"] = round(self.timed[1] / self.timed[0], 3)
        if self.timed[1] > self.timed[0] / 2:
            walk["fetch_ahead"] = True
            self.pool = ThreadPoolExecutor(concurrency)
            self.concurrency = concurrency

    def ahead_of(self, next_url: str, seen_items: int, count: int) -> None:
        """Fetch the pages after ``next_url`` ahead (its ``$skip`` moved on a page each)."""
        assert self.pool is not None
        skip = seen_items + count * len(self.ahead)
        while len(self.ahead) < self.concurrency:
            target = _with_skip(next_url, skip)
            self.ahead.append((target, self.pool.submit(self.get, target)))
            skip += count

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
