"""The API's view of the warehouse: the current snapshot, opened read-only, swapped when a
refresh publishes a new one (checked at most every ``check_interval`` seconds, no restart)."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from warehouse.exceptions import QueryError, SnapshotError
from warehouse.model.schema import empty_warehouse
from warehouse.model.vocabulary import PUBLISHED
from warehouse.storage.db import GUARD_SQL, NO_SPILL, loaded_sources
from warehouse.storage.store import Layout, SnapshotRef, foreign

# Relations the list queries read often and that are costly to compute (views over joins):
# materialised once per snapshot (DuckDB computes them into Arrow tables) and registered under
# the view's own name on the cursors that answer requests, so the same SQL reads the same rows
# without the join.
HOT_VIEWS = ("cost_input", "scenario_ratio")

# Rows of parameterised subqueries (``ListQuery.keep``: cost rows per price basis, rate,
# region, offer, OS and as_of) kept per snapshot, at most this many rows in all, oldest out.
KEPT_ROWS = 1_000_000

# Subqueries asked once that are remembered (to keep their rows when asked again), at most.
ASKED_KEYS = 1_000

# Relations of up to this many rows get a serving table (their rows, JSON encoded once); a
# larger one (every price version) pages with the whole query instead.
SERVING_MAX_ROWS = 200_000

# Where a cursor looks for an unqualified name: this worker's in-memory relations first (the
# materialised hot views), then its serving tables, then the snapshot.
SEARCH_PATH = "memory.main,served.main,snap.main"

# Serving tables live in an in-memory database of their own that DuckDB compresses (ATTACH
# ... (COMPRESS), checkpointed once a table is written): the columns pages filter on are
# dictionary-encoded, so a filter compares codes, not strings. Tables of fewer
# than COMPRESS_FROM_ROWS rows stay in ``memory``: compressed, they answered no quicker, and
# writing one costs a checkpoint at every warm-up.
SERVED_DB = "served"
COMPRESS_FROM_ROWS = 10_000

log = logging.getLogger("perfledger.api")


@dataclass
class Opened:
    """An open snapshot: its pointer (None when nothing was published yet) and connection.

    The connection is DuckDB's own in-memory database with the snapshot file attached
    read-only as ``snap``. Relations computed once per snapshot live in the in-memory
    database, which every cursor sees and searches first (``search_path``): the hot views
    under their own names (so the same SQL reads the materialised rows), kept subquery rows
    (``kept``) and serving tables (``serving``): a relation's rows with their positions, whose
    JSON is encoded once and kept here by position.
    """

    ref: SnapshotRef | None
    con: duckdb.DuckDBPyConnection
    cache: dict = field(default_factory=dict)  # figures computed once per (immutable) snapshot
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _hot: bool = False
    _kept: dict = field(default_factory=dict)  # (sql, params) -> (name, rows), oldest first
    _asked: set = field(default_factory=set)  # (sql, params) asked once and not kept yet
    _serving: dict = field(default_factory=dict)  # (relation, columns, SQL) -> (table, JSON)
    _shapes: dict = field(default_factory=dict)  # relation -> {model: its serving source}
    _names: itertools.count = field(default_factory=itertools.count)
    served_db: str = "memory"  # where serving tables are written (``SERVED_DB`` on a snapshot)
    users: int = 0  # requests answering from it now (``SnapshotReader.hold``)
    retired: bool = False  # replaced or evicted: closed once its last user is done
    past: bool = False  # opened for ``as_of`` (``SnapshotReader.published_at``), not current

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new cursor that reads the in-memory relations first, then the snapshot."""
        cur = self.con.cursor()
        cur.execute(f"SET search_path = '{SEARCH_PATH if self.ref else 'memory.main'}'")
        return cur

    def loaded_sources(self) -> frozenset[str]:
        """The sources with rows in this snapshot, read once (on this thread's cursor)."""
        if "loaded" not in self.cache:
            self.cache["loaded"] = loaded_sources(self.local_cursor())
        return self.cache["loaded"]

    def _ddl(self, sql: str, params: list | None = None) -> None:
        cur = self.cursor()
        try:
            cur.execute(sql, params or [])
        finally:
            cur.close()

    def materialise_hot(self) -> None:
        """The hot views of this snapshot as in-memory tables, computed once (from the views'
        definitions in ``warehouse.figures.derived``, so a snapshot published before a view existed
        has it too)."""
        if self._hot or self.ref is None:  # the empty warehouse: nothing worth computing
            return
        with self._lock:
            if not self._hot:
                from warehouse.figures import derived

                for name in HOT_VIEWS:
                    self._ddl(f"CREATE OR REPLACE TABLE memory.main.{name} AS "  # noqa: S608
                              f"{derived.VIEWS[name][0]}")
                self._hot = True

    def local_cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor on the snapshot (kept for the thread's next request). The
        caller must not close it; after a failure it calls ``drop_local_cursor`` so the next
        request starts on a fresh one."""
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            self.materialise_hot()
            cur = self._local.cursor = self.cursor()
        return cur

    def keeps(self, sql: str, params: list) -> bool:
        """Whether to keep the rows of this subquery (``kept``): on its second request, or when
        warming (``PINNED``); its first runs it as it is, filtered, so a one-off pricing
        (a rate nobody asks again) never pays for computing and encoding every row."""
        key = (sql, repr(params))
        if key in self._kept or PINNED.get() is self:
            return True
        with self._lock:
            again = key in self._asked
            if len(self._asked) >= ASKED_KEYS:  # a client walking through rates: start over
                self._asked.clear()
            self._asked.add(key)
        return again

    def kept(self, sql: str, params: list) -> tuple[str, frozenset[str]]:
        """The rows of a parameterised subquery (``ListQuery.keep``), computed once per
        snapshot and parameters into an in-memory table: its name and columns. At most
        ``KEPT_ROWS`` rows are kept in all; the oldest sets go first (with their serving
        tables)."""
        key = (sql, repr(params))
        with self._lock:
            entry = self._kept.get(key)
            if entry is None:
                self.materialise_hot()
                name = f"kept_{next(self._names)}"
                table = self.local_cursor().sql(sql, params=params).to_arrow_table()
                cur = self.cursor()
                try:  # from Arrow: CREATE TABLE AS takes no bound parameters
                    cur.register("_kept_rows", table)
                    cur.execute(f"CREATE TABLE memory.main.{name} AS "  # noqa: S608 - our name
                                "SELECT * FROM _kept_rows")
                    cur.unregister("_kept_rows")
                finally:
                    cur.close()
                entry = self._kept[key] = (name, table.num_rows, frozenset(table.schema.names))
                while len(self._kept) > 1 and sum(n for _, n, _ in self._kept.values()) > KEPT_ROWS:
                    old, _, _ = self._kept.pop(next(iter(self._kept)))
                    self._drop(old)
        return entry[0], entry[2]

    def _db_for(self, rows: int) -> str:
        """Where a serving table of ``rows`` rows is written (``COMPRESS_FROM_ROWS``)."""
        return self.served_db if rows >= COMPRESS_FROM_ROWS else "memory"

    def shape(self, relation: str, public: type, compute: Callable[[], tuple]) -> tuple:
        """What a serving table of ``relation`` holds for rows of ``public`` (``compute``:
        ``queries.serving_source``), worked out once per relation and model, not per request;
        forgotten with the relation (``_drop``)."""
        shapes = self._shapes.setdefault(relation, {})
        if public not in shapes:
            shapes[public] = compute()
        return shapes[public]

    def _drop(self, relation: str) -> None:
        self._ddl(f"DROP TABLE IF EXISTS memory.main.{relation}")
        self._shapes.pop(relation, None)
        for key in [k for k in self._serving if k[0] == relation]:
            served = self._serving.pop(key)
            if served is not None:  # its database follows from its rows (``_db_for``)
                self._ddl(f"DROP TABLE IF EXISTS {self._db_for(len(served[1]))}.main.{served[0]}")

    def serving(self, relation: str, columns: list[str], base_sql: str, base_params: list,
                order: str, encode) -> tuple[str, tuple[str, ...]] | None:
        """The serving table of ``relation`` with these output ``columns`` (its name) and its
        rows' JSON by position (``encode(row)``, a tuple): the rows ``base_sql`` gives, sorted
        by ``order``, with each row's place in that order in ``pos``, computed once per
        snapshot. A JSON page is then one query for the positions of its rows, which reads
        the columns it filters and sorts on and no JSON. None for a relation of more than
        ``SERVING_MAX_ROWS`` rows (its pages run the whole query: encoding it all would cost
        more than it saves)."""
        key = (relation, tuple(columns), base_sql, repr(base_params))
        if key in self._serving:
            return self._serving[key]
        with self._lock:
            if key not in self._serving:
                import pyarrow as pa

                self.materialise_hot()
                cur = self.cursor()
                try:
                    size = cur.execute(f"SELECT count(*) FROM ({base_sql})",  # noqa: S608
                                       base_params).fetchall()[0][0]
                    if size > SERVING_MAX_ROWS:
                        self._serving[key] = None
                        return None
                    sql = f"SELECT * FROM ({base_sql}) ORDER BY {order}"  # noqa: S608
                    table = cur.sql(sql, params=base_params).to_arrow_table()
                    found = cur.execute(sql, base_params)
                    names = [d[0] for d in found.description]
                    # a tuple of str: the garbage collector stops walking it once it has
                    # seen it (a list of a million rows cost every full collection 9 ms)
                    encoded = tuple(encode(dict(zip(names, r, strict=True))).decode()
                                    for r in found.fetchall())
                    cur.register("_serving_rows", table.append_column(
                        "pos", pa.array(range(table.num_rows), pa.int32())))
                    name = f"serve_{next(self._names)}"
                    db = self._db_for(table.num_rows)
                    cur.execute(f"CREATE TABLE {db}.main.{name} AS "  # noqa: S608 - our name
                                "SELECT * FROM _serving_rows")
                    cur.unregister("_serving_rows")
                    if db == SERVED_DB:
                        try:  # compresses the tables written so far
                            cur.execute(f"CHECKPOINT {SERVED_DB}")
                        except duckdb.TransactionException:  # another write is running (it
                            # fails rather than waits): this table serves as written, and
                            # the next serving table's checkpoint compresses it
                            log.debug("serving table %s left uncompressed for now", name)
                finally:
                    cur.close()
                self._serving[key] = (name, encoded)
        return self._serving[key]

    def drop_local_cursor(self) -> None:
        """Forget this thread's cursor (closing it), e.g. after a query failed on it."""
        cur = getattr(self._local, "cursor", None)
        self._local.cursor = None
        if cur is not None:
            try:
                cur.close()
            except duckdb.Error:
                pass

    @property
    def id(self) -> str | None:
        return self.ref.id if self.ref else None

    @property
    def published_at(self) -> datetime | None:
        return self.ref.published_at if self.ref else None


# The snapshot a warm-up's requests answer from (``SnapshotReader.warm``), whatever is current.
PINNED: ContextVar[Opened | None] = ContextVar("perfledger_pinned_snapshot", default=None)

# The snapshot one request answers from: the first it read, held for the rest of the request
# (the app gives each request an empty holder), so a publish between two of its reads (the
# response cache's key and the route's rows, or a route's two looks) never mixes snapshots.
ANSWERING: ContextVar[list[Opened] | None] = ContextVar("perfledger_answering", default=None)


class SnapshotReader:
    """Holds a read-only connection to the current snapshot and swaps it after a publish.

    A replaced connection stays open while a request still holds it (``hold``), so requests
    that started on it finish on it, however many publishes come meanwhile; a request never
    sees a half-published warehouse. A current snapshot that
    cannot be opened (truncated, overwritten) is named in ``corrupt`` and the newest readable
    one is served instead (the one already open, else the newest readable file); with none,
    data routes answer 503 until a refresh recovers (``Layout.recover_current``).
    """

    def __init__(self, layout: Layout, check_interval: float = 1.0,
                 warm: Callable[[Opened], None] | None = None) -> None:
        self.layout = layout
        self.check_interval = check_interval
        self._lock = threading.Lock()
        # Requests' counts of the snapshots they hold (``hold``): a lock of its own, held for
        # a count only, since every request takes it on the event loop's thread (``_lock`` is
        # held while a snapshot opens or warms).
        self._uses = threading.Lock()
        self._current: Opened | None = None
        self._previous: Opened | None = None
        self._history: dict[str, Opened] = {}
        self._checked = 0.0
        self.corrupt: dict | None = None  # {"snapshot_id", "reason"} while CURRENT is unreadable
        # With ``warm``, a newly published snapshot is opened and warmed (what its requests
        # build once: hot views, serving tables) in a thread while the one open keeps serving,
        # then swapped in; no user's request waits for that work.
        self._warm = warm
        self._warming: str | None = None  # the snapshot id a thread is warming

    def _open(self, ref: SnapshotRef | None) -> Opened:
        if ref is None:
            return Opened(None, empty_warehouse())
        # One thread per query: API queries are small, and requests already run in parallel.
        con = duckdb.connect(config={"threads": 1, **NO_SPILL})
        try:
            con.execute("ATTACH ? AS snap (READ_ONLY)", [str(ref.path)])
            con.execute(f"ATTACH ':memory:' AS {SERVED_DB} (COMPRESS)")
            why = foreign(con, "snap")
            if why is not None:  # another program's database: a health state, not a 500
                raise duckdb.InvalidInputException(why)
            con.execute(GUARD_SQL)  # attached: from here on it reads what it has, nothing else
        except duckdb.Error:
            con.close()
            raise
        return Opened(ref, con, served_db=SERVED_DB)

    def get(self) -> Opened:
        """The snapshot to answer this request from: a warm-up's (``PINNED``), else the one
        this request read first (``ANSWERING``), else the current one."""
        pinned = PINNED.get()
        if pinned is not None:
            return pinned
        held = ANSWERING.get()
        if held:  # the first current one it read (an as_of snapshot is ``past``)
            first = held[0] if not held[0].past else next((o for o in held if not o.past), None)
            if first is not None:
                return first
        opened = self._current_one()
        if held is None:
            return opened
        with self._uses:  # replaced twice since it was read (so closed): the current one
            return self._hold(self._current if opened.retired and self._current else opened,
                              held)

    @staticmethod
    def _hold(opened: Opened, held: list[Opened]) -> Opened:
        """Count ``opened`` in use by one request (its holder ``held``) until ``release``: a
        snapshot replaced twice or evicted meanwhile stays open until its last user is done.
        Called with ``_uses`` held, the lock a snapshot is retired under."""
        opened.users += 1
        held.append(opened)
        return opened

    def release(self, held: list[Opened]) -> None:
        """A request is done with the snapshots it held; a retired one with no user left
        closes, in a thread of its own (closing takes milliseconds: never on the event loop's
        thread, where a request ends)."""
        with self._uses:
            done = []
            for opened in held:
                opened.users -= 1
                if opened.retired and opened.users == 0:
                    done.append(opened)
        for opened in done:
            threading.Thread(target=opened.con.close, name=f"close {opened.id}").start()

    def _retire(self, opened: Opened) -> None:
        """No new request reads ``opened``; it closes now, or when its last user is done."""
        with self._uses:
            opened.retired = True
            idle = opened.users == 0
        if idle:
            opened.con.close()

    def _current_one(self) -> Opened:
        now = time.monotonic()
        current = self._current
        if current is not None and now - self._checked < self.check_interval:
            return current
        with self._lock:
            if self._current is not None and now - self._checked < self.check_interval:
                return self._current
            ref = self.layout.read_current()
            known_bad = self.corrupt is not None and ref is not None \
                and ref.id == self.corrupt["snapshot_id"]
            if not known_bad and (self._current is None or ref is None
                                  or ref.id != self._current.id):
                if self._warm is None or self._current is None or ref is None:
                    self._swap_to(ref)
                elif self._warming != ref.id:  # the open one serves until this one is warm
                    self._warming = ref.id
                    threading.Thread(target=self._warm_then_swap, args=(ref,), daemon=True,
                                     name=f"warm {ref.id}").start()
            self._checked = now
            if self._current is None:
                raise SnapshotError(f"corrupt snapshot {self.corrupt['snapshot_id']} and no "
                                    "readable one to serve instead; the next refresh rebuilds "
                                    "it" if self.corrupt else "no snapshot can be opened")
            return self._current

    def _swap_to(self, ref: SnapshotRef | None) -> None:
        try:
            opened = self._open(ref)
            self.corrupt = None
        except duckdb.Error as e:
            assert ref is not None  # the empty warehouse is in memory
            self._mark_corrupt(ref, e)
            if self._current is not None and self._current.id is not None:
                return  # keep serving what is open
            fallback = self.layout.last_readable(skip=ref.id)
            if fallback is None:
                return
            opened = self._open(fallback)
        self._install(opened)

    def _mark_corrupt(self, ref: SnapshotRef, e: duckdb.Error) -> None:
        """Name ``ref`` as unreadable (health says so) and log why."""
        self.corrupt = {"snapshot_id": ref.id, "reason": " ".join(str(e).split())}
        log.error("snapshot %s cannot be read (%s); serving the last readable one",
                  ref.id, self.corrupt["reason"])

    def _install(self, opened: Opened) -> None:
        """Serve ``opened``; the one it replaces stays open for requests still on it, and the
        one before that closes once no request holds it."""
        if self._previous is not None:
            self._retire(self._previous)
        self._previous, self._current = self._current, opened

    def start(self) -> None:
        """Open the current snapshot and warm it, before the first request (a server's start).
        A damaged or refused CURRENT is a health state, not a failed start: the server starts,
        its data routes answer 503 saying why (as without a warm-up) until a refresh."""
        with self._lock:
            try:
                self._swap_to(self.layout.read_current())
            except SnapshotError as e:
                log.error("%s: data routes answer 503 until a refresh publishes", e)
            self._checked = time.monotonic()
        if self._warm is not None and self._current is not None:
            self._warm_up(self._current)

    def _warm_up(self, opened: Opened) -> None:
        """Run the warm-up on ``opened``; a failure is logged (its requests build on demand)."""
        assert self._warm is not None
        started = time.perf_counter()
        try:
            self._warm(opened)
        except Exception:  # noqa: BLE001 - warming is an optimisation, never an outage
            log.exception("warming snapshot %s failed; its requests build on demand", opened.id)
        log.info("snapshot %s warmed in %.2f s", opened.id, time.perf_counter() - started)

    def _warm_then_swap(self, ref: SnapshotRef) -> None:
        """Open ``ref`` and warm it while the current snapshot serves, then swap it in."""
        try:
            opened = self._open(ref)
        except duckdb.Error as e:
            with self._lock:
                self._mark_corrupt(ref, e)
                self._warming = None
            return
        self._warm_up(opened)
        with self._lock:
            self.corrupt = None
            self._install(opened)
            self._warming = None

    def cursor(self, at: datetime | None = None) -> tuple[Opened, duckdb.DuckDBPyConnection]:
        """The snapshot (current, or the one published at ``at``) and a cursor of its
        connection for one request's thread."""
        opened = self.get() if at is None else self.published_at(at)
        return opened, opened.cursor()

    def published_at(self, at: datetime) -> Opened:
        """The snapshot that was current at ``at``: the last one published at or before it
        (publish times follow the store's order: a clock set back never publishes "earlier").
        Raises ``QueryError`` when none was, or when retention has pruned it."""
        runs = [r for r in self.layout.read_runs()
                if r.get("snapshot_id") and r["status"] in PUBLISHED
                and r.get("finished_at")]
        before = [r for r in runs if datetime.fromisoformat(r["finished_at"]) <= at]
        if not before:
            first = min((r["finished_at"] for r in runs), default=None)
            raise QueryError(f"as_of {at.isoformat()}: no snapshot was published by then"
                             + (f"; the first was published {first}" if first else ""),
                             param="as_of")
        run = max(before, key=lambda r: r["finished_at"])
        path = self.layout.snapshot_file(f"{run['snapshot_id']}.duckdb")
        if not path.exists():
            kept = sorted(p.stem for p in self.layout.snapshots.glob("*.duckdb"))
            raise QueryError(f"as_of {at.isoformat()}: snapshot {run['snapshot_id']} was pruned "
                             f"by retention; the oldest kept is {kept[0] if kept else 'none'}",
                             param="as_of")
        with self._lock:
            cached = self._history.get(run["snapshot_id"])
            if cached is None:
                ref = SnapshotRef(run["snapshot_id"], path,
                                  datetime.fromisoformat(run["finished_at"]))
                cached = self._open(ref)
                cached.past = True
                self._history[run["snapshot_id"]] = cached
                while len(self._history) > 4:
                    self._retire(self._history.pop(next(iter(self._history))))
            held = ANSWERING.get()
            if held is None:
                return cached
            with self._uses:
                return self._hold(cached, held)

    def close(self) -> None:
        """Close every connection."""
        for o in (self._current, self._previous, *self._history.values()):
            if o is not None:
                o.con.close()
