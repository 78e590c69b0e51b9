"""The API's view of the warehouse: the current snapshot, opened read-only, swapped when a
refresh publishes a new one (checked at most every ``check_interval`` seconds, no restart)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime

import duckdb

from warehouse import derived
from warehouse.schema import create_all
from warehouse.store import Layout, SnapshotRef


@dataclass
class Opened:
    """An open snapshot: its pointer (None when nothing was published yet) and connection."""

    ref: SnapshotRef | None
    con: duckdb.DuckDBPyConnection

    @property
    def id(self) -> str | None:
        return self.ref.id if self.ref else None

    @property
    def published_at(self) -> datetime | None:
        return self.ref.published_at if self.ref else None


def _empty() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    create_all(con)
    derived.install(con)
    return con


class SnapshotReader:
    """Holds a read-only connection to the current snapshot and swaps it after a publish.

    The previous connection stays open until the next swap, so requests that started on it
    finish on it; a request never sees a half-published warehouse.
    """

    def __init__(self, layout: Layout, check_interval: float = 1.0) -> None:
        self.layout = layout
        self.check_interval = check_interval
        self._lock = threading.Lock()
        self._current: Opened | None = None
        self._previous: Opened | None = None
        self._checked = 0.0

    def _open(self, ref: SnapshotRef | None) -> Opened:
        if ref is None:
            return Opened(None, _empty())
        return Opened(ref, duckdb.connect(str(ref.path), read_only=True))

    def get(self) -> Opened:
        """The snapshot to answer this request from."""
        now = time.monotonic()
        current = self._current
        if current is not None and now - self._checked < self.check_interval:
            return current
        with self._lock:
            if self._current is not None and now - self._checked < self.check_interval:
                return self._current
            ref = self.layout.read_current()
            if self._current is None or (ref and ref.id != self._current.id):
                opened = self._open(ref)
                if self._previous is not None:
                    self._previous.con.close()
                self._previous, self._current = self._current, opened
            self._checked = now
            return self._current

    def cursor(self) -> tuple[Opened, duckdb.DuckDBPyConnection]:
        """The snapshot and a cursor of its connection for one request's thread."""
        opened = self.get()
        return opened, opened.con.cursor()

    def close(self) -> None:
        """Close every connection."""
        for o in (self._current, self._previous):
            if o is not None:
                o.con.close()
