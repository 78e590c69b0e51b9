"""The built-in mirror: MLPerf files pinned to a commit, carried inside the package.

A file at a pinned commit never changes, so perfledger may carry it: ``PROVENANCE.toml`` here
lists each carried copy (gzip, beside it) with its upstream URL, commit and the sha256 of its
uncompressed bytes; ``NOTICE`` names MLCommons and the Apache License 2.0. ``fetch_pinned``
fetches a pinned file as usual and, only when that fetch fails, reads the carried copy whose
sha256 equals the pin; the bytes are upstream's, so what is parsed from them keeps its evidence
label, and the source snapshot's URL says ``carried copy of <upstream URL>``. A source with no
pin, or no copy for its pin (Azure prices, which change), fails as before. Each source section
switches it off with ``builtin_mirror = false``.
"""

from __future__ import annotations

import gzip
import hashlib
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from ingest.context import LoadContext
from ingest.http import Raw
from warehouse.exceptions import FetchError, SourceError
from warehouse.redact import redact

MIRROR_DIR = Path(__file__).resolve().parent
CARRIED_PREFIX = "carried copy of "


@dataclass(frozen=True)
class CarriedCopy:
    """One carried file, as PROVENANCE.toml records it."""

    path: Path
    upstream: str
    repository: str
    commit: str
    sha256: str
    size: int
    source: str | None = None  # an API answer carried for a source: which source,
    request: str | None = None  # which request (path and query) it answers,
    rows_key: str | None = None  # and where its rows are, when not the whole body
    answered: str | None = None  # the date it was captured

    def read(self) -> bytes:
        """The uncompressed bytes, refused when they are not the recorded ones."""
        body = gzip.decompress(self.path.read_bytes())
        digest = hashlib.sha256(body).hexdigest()
        if digest != self.sha256:
            raise SourceError(f"the built-in mirror's copy {self.path.name} of {self.upstream} is "
                              f"damaged: sha256 {digest}, PROVENANCE.toml records {self.sha256}")
        return body


@cache
def carried_copies() -> tuple[CarriedCopy, ...]:
    """Every carried file, from PROVENANCE.toml."""
    entries = tomllib.loads((MIRROR_DIR / "PROVENANCE.toml").read_text(encoding="utf-8"))["file"]
    return tuple(CarriedCopy(path=MIRROR_DIR / e["path"], upstream=e["upstream"],
                             repository=e["repository"], commit=e["commit"], sha256=e["sha256"],
                             size=e["bytes"], source=e.get("source"), request=e.get("request"),
                             rows_key=e.get("rows_key"), answered=e.get("answered"))
                 for e in entries)


def carried_copy(sha256: str) -> CarriedCopy | None:
    """The carried file whose uncompressed bytes have this sha256, if perfledger carries one."""
    return next((c for c in carried_copies() if c.sha256 == sha256), None)


def carried_answer(source: str, request: str) -> CarriedCopy | None:
    """The carried API answer of ``source`` to ``request`` (path and query), if any."""
    return next((c for c in carried_copies() if (c.source, c.request) == (source, request)),
                None)


def fetch_or_carried(ctx: LoadContext, url: str, source: str, prev: dict | None, *,
                     request: str, mirror: bool) -> tuple[Raw, CarriedCopy | None]:
    """Fetch ``url`` as ``ctx.fetch`` does; when that fails and ``mirror`` is on, the carried
    answer to ``request`` stands in (noted in the source's warnings; its ``Raw.url`` says
    ``carried copy of <upstream>``). The copy is returned beside it (None when fetched)."""
    try:
        return ctx.fetch(url, source, prev), None
    except FetchError as e:
        copy = carried_answer(source, request) if mirror else None
        if copy is None:
            raise
        return _stand_in(ctx, copy, source, url, e, f"answered {copy.answered}"), copy


def _stand_in(ctx: LoadContext, copy: CarriedCopy, source: str, url: str, e: FetchError,
              which: str, what: str = "") -> Raw:
    """The carried ``copy`` standing in for ``url``, which failed with ``e``: said in the
    source's warnings (``which`` names the copy's commit or answer date, ``what`` the file)."""
    note = f"{CARRIED_PREFIX}{copy.upstream}"
    ctx.outcome.warnings.append(
        f"{' '.join(filter(None, (source, what)))}: {redact(url)} could not be fetched ({e}); "
        f"read the built-in mirror's {note} ({which}, sha256 {copy.sha256[:12]}…)")
    return Raw(source=source, url=note, body=copy.read(), fetched_at=datetime.now(UTC))


def carried(raw: Raw) -> bool:
    """True when these bytes were read from the built-in mirror."""
    return raw.url.startswith(CARRIED_PREFIX)


def fetch_pinned(ctx: LoadContext, url: str, source: str, prev: dict | None, *, what: str,
                 sha256: str | None, mirror: bool) -> Raw:
    """Fetch ``url`` as ``ctx.fetch`` does. With a ``sha256`` pin, bytes that differ from it are
    refused (a pinned file never changes, so they are not the file the pin names), and a failed
    fetch falls back, when ``mirror`` is on, to the carried copy with that sha256, noting it in
    the source's warnings; its ``Raw.url`` then says ``carried copy of <upstream URL>`` (see
    ``carried``). ``what`` names the file in messages (e.g. the round)."""
    try:
        raw = ctx.fetch(url, source, prev)
    except FetchError as e:
        copy = carried_copy(sha256) if mirror and sha256 else None
        if copy is None:
            raise
        return _stand_in(ctx, copy, source, url, e, f"commit {copy.commit[:12]}", what)
    if sha256 and not raw.not_modified and raw.sha256 != sha256:
        raise SourceError(
            f"{source} {what}: {redact(url)} returned {len(raw.body)} bytes with sha256 "
            f"{raw.sha256}, but sources.toml pins {sha256}: not the pinned file (fix the URL or "
            "the sha256)", source=source, url=url)
    return raw
