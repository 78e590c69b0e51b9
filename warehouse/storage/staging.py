"""The snapshot a refresh builds, opened on the first write.

A refresh in which no source changes never copies the warehouse and never creates a table (so
it never imports the SQLModel schema): until a source writes, sources read their previous state
from the current snapshot, read-only. The first write copies the current snapshot to a staging
file, creates any missing table and carries on there. Each source runs in a transaction of its
own; opening inside a source begins that source's transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from warehouse.storage.db import NO_SPILL
from warehouse.storage.store import Layout


class Staging:
    """The staging file of one refresh: ``reader`` for reads, ``connection`` for writes."""

    def __init__(self, layout: Layout, snapshot_id: str, memory_mb: int,
                 on_open: Callable[[], None] = lambda: None) -> None:
        self.layout = layout
        self.on_open = on_open  # called just before the copy starts
        self.snapshot_id = snapshot_id
        self.memory_mb = memory_mb
        self.path: Path | None = None
        self.seconds = 0.0  # time spent copying the current snapshot and creating tables
        self._con: duckdb.DuckDBPyConnection | None = None
        self._current: duckdb.DuckDBPyConnection | None = None
        self._in_source = False

    @property
    def opened(self) -> bool:
        """True once something was written (the staging file exists)."""
        return self._con is not None

    def connection(self) -> duckdb.DuckDBPyConnection:
        """The staging connection, opened now if this is the first write."""
        if self._con is not None:
            return self._con
        if self.path is not None:
            raise RuntimeError("staging was closed; it is not reopened (that would copy over it)")
        self.on_open()
        started = time.perf_counter()
        self.path = self.layout.start_staging(self.snapshot_id)
        con = duckdb.connect(str(self.path), config={"memory_limit": f"{self.memory_mb}MB"})
        try:
            from warehouse.model.schema import create_all  # SQLModel: only a refresh that writes

            create_all(con)
            if self._in_source:
                con.execute("BEGIN TRANSACTION")
        except BaseException:
            con.close()
            raise
        self._con = con
        self._close_current()
        self.seconds = time.perf_counter() - started
        return con

    def reader(self) -> duckdb.DuckDBPyConnection:
        """Where previous state is read: staging once open, else the current snapshot
        (read-only); before the first publish there is no current, so staging opens."""
        if self._con is not None:
            return self._con
        if self._current is None:
            current = self.layout.read_current()
            if current is None:
                return self.connection()
            # Attached read-only to a connection of its own: in a process that also serves
            # the API (serve --refresh-every), the file is already open there with another
            # configuration, which a second duckdb.connect of it would refuse.
            con = duckdb.connect(config=NO_SPILL)
            try:
                con.execute("ATTACH ? AS published (READ_ONLY)", [str(current.path)])
                con.execute("USE published")
            except BaseException:
                con.close()
                raise
            self._current = con
        return self._current

    def begin(self) -> None:
        """A source starts: its writes are one transaction."""
        self._in_source = True
        if self._con is not None:
            self._con.execute("BEGIN TRANSACTION")

    def commit(self) -> None:
        """The source finished: keep its writes."""
        self._in_source = False
        if self._con is not None:
            self._con.execute("COMMIT")

    def rollback(self) -> None:
        """The source failed: drop its writes (its last good rows stay)."""
        self._in_source = False
        if self._con is not None:
            self._con.execute("ROLLBACK")

    def close(self) -> Path | None:
        """Close every connection (the file stays, for validation and publishing)."""
        self._close_current()
        if self._con is not None:
            self._con.close()
            self._con = None
        return self.path

    def discard(self) -> None:
        """Close and delete the staging file, if there is one."""
        self.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path.with_name(self.path.name + ".wal").unlink(missing_ok=True)
            self.path = None

    def _close_current(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
