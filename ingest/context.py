"""The contract between the refresh pipeline and each source.

A source is one folder under ``ingest/`` whose ``__init__`` exposes ``SPEC``, a ``SourceSpec``:
its name, its ``sources.toml`` section (a pydantic model), its ``load`` function, its validation
rules and, optionally, a ``finish`` step run on the staged snapshot once every source has loaded.
``load`` receives a ``LoadContext`` (staging connection, HTTP client, its own settings) and fills
its ``SourceOutcome``; it raises a ``PerfledgerError`` to fail its source, and the refresh rolls
back that source's changes, so its last good rows stay in the new snapshot.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import httpx
from pydantic import BaseModel, ConfigDict, Field

from ingest.http import FetchLimits, Raw, RetryPolicy, fetch_bytes, resolve_url
from warehouse.exceptions import GrowthError, PerfledgerError, ShrinkError, SourceError
from warehouse.model.vocabulary import PART_FAILED, SourceStatus
from warehouse.quality.suites import Rule
from warehouse.redact import redact
from warehouse.storage.db import fetch_dicts, insert_rows, scalar
from warehouse.storage.staging import Staging
from warehouse.storage.store import Layout

GROWTH_FLOOR = 1000  # rows: fewer are never refused as growth


# The checkout's own curated files (claims, hardware, models, aliases): where a sources file
# that names no other directory reads them, wherever that sources file lives.
CURATED_DATA = Path(__file__).resolve().parent.parent / "data"


class SourceConfig(BaseModel):
    """Base of every ``sources.toml`` section: unknown keys are an error; ``enabled``, the hosts
    a redirect may go to besides the configured origin, and the source's largest body."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    allowed_redirect_hosts: list[str] = Field(default_factory=list)
    max_body_mb: float | None = Field(None, gt=0)  # unset: the max_body_mb setting


@dataclass
class SourceOutcome:
    """What happened to one source in one refresh."""

    source: str
    status: SourceStatus = SourceStatus.pending  # then updated, unchanged, partial or failed
    rows: int = 0
    bytes_fetched: int = 0
    seconds: float = 0.0
    fetch_seconds: float = 0.0  # of ``seconds``: reading the source (and storing its bytes)
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)
    error: dict | None = None  # a failed source: error type, retryable, context (URLs redacted)
    stale: dict[str, str] = field(default_factory=dict)  # parts (rounds) that failed: why
    wrote: bool = False  # rows were written (the new snapshot differs for this source)
    had_rows: bool = False  # the snapshot built on had rows of this source (a failure keeps them)
    unloaded: set[str] = field(default_factory=set)  # failed parts with no rows to keep
    # parts (or the source, under its own name) whose upstream body could not be read: a short
    # redacted excerpt for the CLI and the server log, never in ``as_dict`` (the run record)
    excerpts: dict[str, str] = field(default_factory=dict)

    def finish(self, written: int) -> None:
        """Set the status once every part was tried: ``partial`` when some parts failed (each
        named in ``stale``), else updated or unchanged by whether rows were written."""
        self.rows += written
        self.wrote = self.wrote or written > 0
        if self.stale:
            self.status = SourceStatus.partial
            self.message = "; ".join(f"{part} {PART_FAILED[part not in self.unloaded]}: {why}"
                                     for part, why in self.stale.items())
        else:
            self.status = SourceStatus.updated if self.wrote else SourceStatus.unchanged

    def fail(self, e: BaseException) -> None:
        """Mark the source failed by ``e``; a project error keeps its type, whether a retry may
        help, and its context (source, URL, line, field)."""
        self.status = SourceStatus.failed
        if isinstance(e, SourceError) and e.excerpt:
            self.excerpts[self.source] = e.excerpt
        if isinstance(e, PerfledgerError):
            self.message = str(e)
            context = {k: redact(v) if k == "url" and isinstance(v, str) else v
                       for k, v in e.context.items()}
            self.error = {"type": type(e).__name__, "retryable": e.retryable, **context}
        else:
            self.message = f"{type(e).__name__}: {e}"
            self.error = {"type": type(e).__name__, "retryable": False}

    def as_dict(self) -> dict:
        """JSON-ready form for the run record."""
        return {"source": self.source, "status": self.status, "rows": self.rows,
                "bytes_fetched": self.bytes_fetched, "seconds": round(self.seconds, 3),
                "fetch_seconds": round(self.fetch_seconds, 3),
                "message": self.message, "warnings": self.warnings, "details": self.details,
                "error": self.error, "stale": self.stale}


@dataclass
class LoadContext:
    """Everything a loader needs; nothing global."""

    stage: Staging
    client: httpx.Client
    layout: Layout
    config: SourceConfig
    base_dir: Path
    policy: RetryPolicy
    outcome: SourceOutcome
    shrink_ratio: float = 0.5
    accept_shrink: bool = False
    growth_ratio: float = 10.0
    accept_growth: bool = False
    limits: FetchLimits = field(default_factory=FetchLimits)  # redirects and body size
    today: str = ""
    changing: Callable[[], None] = lambda: None  # a loader calls it once it knows rows will change
    emit: Callable[[str, str], None] = lambda kind, text: None  # progress for the operator
    deadline: float | None = None  # time.monotonic() by which the source must be done
    request_seconds: float = 300.0  # the most one request (retries included) may take
    floor: datetime | None = None  # the store's newest time (Layout.newest_known) at the start
    _pending: list[dict] = field(default_factory=list)

    def now(self) -> datetime:
        """The time this run stamps what it writes: the clock's, never before the store's
        newest (a clock set back continues from the store, so versions and fetches stay in
        order and no interval ends before it starts)."""
        wall = datetime.now(UTC)
        return max(wall, self.floor) if self.floor is not None else wall

    def fetched(self, raw: Raw) -> datetime:
        """When ``raw`` is recorded as fetched: its fetch time, never before the store's."""
        return max(raw.fetched_at, self.floor) if self.floor is not None else raw.fetched_at

    def resolve(self, url: str) -> str:
        """A configured URL, relative plain paths made absolute against the sources file."""
        return resolve_url(self.base_dir, url)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The staging connection, for writes (the first use stages a copy of the current
        snapshot) and for reads after a write."""
        return self.stage.connection()

    @property
    def reader(self) -> duckdb.DuckDBPyConnection:
        """For reading the previous state before deciding to write: staging once open, else
        the current snapshot, read-only."""
        return self.stage.reader()

    @contextmanager
    def fetching(self) -> Iterator[None]:
        """Time a fetch: the source's seconds are reported as fetching and the rest."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.outcome.fetch_seconds += time.perf_counter() - started

    def request_deadline(self) -> float:
        """When a request starting now must be done: its own limit, or the source's."""
        own = time.monotonic() + self.request_seconds
        return own if self.deadline is None else min(own, self.deadline)

    def fetch(self, url: str, source: str, prev: dict | None) -> Raw:
        """GET one URL (or read one file) as ``source``, conditionally on ``prev``'s ETag /
        Last-Modified, within the request and source deadlines, timed as fetching."""
        with self.fetching():
            return fetch_bytes(self.client, url, source=source, policy=self.policy,
                               etag=prev["etag"] if prev else None,
                               last_modified=prev["last_modified"] if prev else None,
                               deadline=self.request_deadline(), limits=self.limits)

    def to_parse(self, raw: Raw, prev: dict | None, parser_version: str) -> Raw | None:
        """The bytes a loader must parse, or None when ``raw`` brings nothing new against
        ``prev`` for a parser of ``parser_version`` (a 304, or the same sha256). A parser (or
        rules file) changed since ``prev`` was read makes unchanged bytes new: after a 304 they
        are ``prev``'s own from the raw store, fetched again in full if the store lost them."""
        if prev is None or prev["parser_version"] == parser_version:
            return None if raw.same_as(prev) else raw
        if not raw.not_modified:
            return raw
        path = self.layout.raw_path(prev["sha256"])
        body = path.read_bytes() if path.exists() else b""
        if hashlib.sha256(body).hexdigest() != prev["sha256"]:
            return self.fetch(raw.url, raw.source, None)
        return Raw(source=raw.source, url=prev["url"], body=body, fetched_at=prev["fetched_at"],
                   etag=prev["etag"], last_modified=prev["last_modified"])

    def previous(self, source: str, label: str | None) -> dict | None:
        """The source snapshot the current rows of this source and label were loaded from:
        the latest fetched (``record`` moves a snapshot seen again to its new fetch)."""
        rows = fetch_dicts(
            self.reader,
            "SELECT * FROM source_snapshot WHERE source = ? AND label IS NOT DISTINCT FROM ? "
            "ORDER BY fetched_at DESC LIMIT 1", [source, label])
        return rows[0] if rows else None

    @staticmethod
    def snapshot_id(raw: Raw, label: str | None) -> str:
        """The id ``record`` gives these bytes: content-derived (source, label, sha256), so a
        parser can tag rows before the bytes are recorded."""
        return hashlib.sha256(f"{raw.source}\x1f{label}\x1f{raw.sha256}".encode()).hexdigest()[:16]

    def record(self, raw: Raw, *, kind: str, label: str | None, parser_version: str,
               defer: bool = False) -> str:
        """Save the raw bytes, record the source snapshot, return its id. With ``defer`` the
        row is queued and written by ``flush_snapshots`` (one bulk insert for many pages; its
        URL is redacted then, as most queued rows are dropped unwritten)."""
        sha = raw.sha256
        snapshot_id = self.snapshot_id(raw, label)
        raw_path = self.layout.save_raw(raw.body, sha)
        self.outcome.bytes_fetched += len(raw.body)
        row = {"id": snapshot_id, "source": raw.source, "kind": kind, "label": label,
               "url": raw.url if defer else redact(raw.url), "sha256": sha,
               "fetched_at": self.fetched(raw),
               "byte_size": len(raw.body), "etag": raw.etag, "last_modified": raw.last_modified,
               "parser_version": parser_version, "raw_path": raw_path}
        if defer:
            self._pending.append(row)
        elif not scalar(self.con, "SELECT count(*) FROM source_snapshot WHERE id = ?",
                        [snapshot_id]):
            insert_rows(self.con, "source_snapshot", [row])
        else:
            self._seen_again([row])
        return snapshot_id

    def _seen_again(self, rows: list[dict]) -> None:
        """Bytes recorded before were fetched and loaded again (A → B → A): their snapshot row
        takes this fetch's time and headers, so ``previous`` (the latest ``fetched_at``) is
        what the last successful fetch returned, not the last new sha."""
        if not rows:
            return
        self.con.executemany(
            "UPDATE source_snapshot SET fetched_at = ?, url = ?, etag = ?, last_modified = ?, "
            "parser_version = ? WHERE id = ?",
            [[r["fetched_at"], redact(r["url"]), r["etag"], r["last_modified"],
              r["parser_version"], r["id"]] for r in rows])

    def flush_snapshots(self) -> None:
        """Write the queued source snapshot rows that are not recorded yet."""
        if not self._pending:
            return
        ids = [r["id"] for r in self._pending]
        known = {r[0] for r in self.con.execute(
            "SELECT id FROM source_snapshot WHERE id IN (SELECT unnest(?::VARCHAR[]))",
            [ids]).fetchall()}
        fresh = {r["id"]: {**r, "url": redact(r["url"])} for r in self._pending
                 if r["id"] not in known}
        insert_rows(self.con, "source_snapshot", fresh.values())
        self._seen_again([r for r in self._pending if r["id"] in known])
        self._pending.clear()

    def discard_snapshots(self) -> None:
        """Forget the queued source snapshot rows (their source turned out unchanged)."""
        self._pending.clear()

    def check_entities(self, what: str, old: set, new: set) -> None:
        """Refuse a source in which things it had (a model's limits, a model's results in a
        round) are gone, naming them (unless accepted): a reworded or broken source, not a
        real removal, until someone says otherwise."""
        gone = sorted(old - new, key=str)
        if gone and not self.accept_shrink:
            shown = ", ".join(" ".join(str(x) for x in g) if isinstance(g, tuple) else str(g)
                              for g in gone[:10]) + (" …" if len(gone) > 10 else "")
            raise ShrinkError(
                f"{what}: {len(gone)} entr{'y' if len(gone) == 1 else 'ies'} the last good refresh "
                f"had {'is' if len(gone) == 1 else 'are'} missing: {shown}; looks like a broken "
                "or reworded source — rerun with --accept-shrink if it is real")

    def check_growth(self, what: str, old: int, new: int) -> None:
        """Refuse a source that suddenly returns far more rows (unless accepted): more than
        ``growth_ratio`` times the last good count, and more than ``GROWTH_FLOOR`` rows (a
        handful of rows growing to a few hundred is a normal first real file)."""
        if old and new > old * self.growth_ratio and new > GROWTH_FLOOR \
                and not self.accept_growth:
            raise GrowthError(
                f"{what}: {new} rows where the last good refresh had {old} "
                f"(more than {self.growth_ratio:g}x); looks like a wrong or runaway source — "
                "rerun with --accept-growth if it is real")

    def check_shrink(self, what: str, old: int, new: int) -> None:
        """Refuse a source that suddenly returns far fewer rows (unless accepted)."""
        if old and new < old * self.shrink_ratio and not self.accept_shrink:
            raise ShrinkError(
                f"{what}: {new} rows where the last good refresh had {old} "
                f"(fewer than {self.shrink_ratio:.0%}); looks like a broken source — "
                "rerun with --accept-shrink if it is real")


@dataclass(frozen=True)
class SourceSpec:
    """What the refresh pipeline needs to know about one source (one registry line)."""

    name: str
    config: type[SourceConfig]
    load: Callable[[LoadContext], None]
    rules: Callable[[], list[Rule]]
    finish: Callable[[duckdb.DuckDBPyConnection], dict] | None = None
    doc: str = ""
