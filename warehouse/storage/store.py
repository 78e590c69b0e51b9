"""The data directory: raw store, snapshot files, the CURRENT pointer, the run journal, the lock.

    var/
      raw/ab/ab12…            raw bytes, content-addressed by sha256 (never pruned)
      snapshots/<id>.duckdb   published snapshots (immutable once published)
      snapshots/<id>.duckdb.partial   a refresh's staging file (removed if the refresh dies)
      CURRENT                 JSON pointer to the published snapshot; replaced atomically
      runs/<run id>.json      one record per refresh run, published or not
      refresh.lock            flock held by the running refresh (released by the OS on death)
      state/<source>.json     what a source learnt without publishing (see ``read_state``)
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from warehouse.exceptions import RefreshLocked, SnapshotError

SHA256 = re.compile(r"[0-9a-f]{64}")
ID_TIME = "%Y%m%dT%H%M%S%fZ"  # the time part of a run or snapshot id


def id_time(snapshot_id: str) -> datetime | None:
    """The UTC time a run or snapshot id starts with (None for an id of another form)."""
    try:
        return datetime.strptime(snapshot_id[:22], ID_TIME).replace(tzinfo=UTC)
    except ValueError:
        return None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, sync_dir: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new bytes, never a mix.
    ``sync_dir=False`` leaves the directory fsync to the caller (many files, one fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if sync_dir:
        _fsync_dir(path.parent)


@dataclass(frozen=True)
class SnapshotRef:
    """The published snapshot: id, file, publish time."""

    id: str
    path: Path
    published_at: datetime


def unreadable(path: Path) -> str | None:
    """Why DuckDB cannot open the snapshot file at ``path`` and read its catalog (one line),
    or None when it can. Attached read-only to a connection of its own, so a file the calling
    process already has open (serve --refresh-every) is checked too."""
    import duckdb

    if not path.exists():
        return "the file is missing"
    from warehouse.storage.db import NO_SPILL

    con = duckdb.connect(config=NO_SPILL)
    try:
        con.execute("ATTACH ? AS probe (READ_ONLY)", [str(path)])
        return foreign(con, "probe")
    except duckdb.Error as e:
        return " ".join(str(e).split())
    finally:
        con.close()


# The tables every route, the health check and a refresh read: a DuckDB file without them is
# another program's database (tests/warehouse check they are tables of warehouse.model.schema).
REQUIRED_TABLES = ("source_snapshot", "refresh_run", "validation_result", "mlperf_result")


def foreign(con, database: str) -> str | None:
    """Why the database attached as ``database`` is not a perfledger snapshot (one line), or
    None when it has every ``REQUIRED_TABLES``."""
    have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() "
                                      "WHERE database_name = ?", [database]).fetchall()}
    missing = [t for t in REQUIRED_TABLES if t not in have]
    return f"not a perfledger snapshot (no {', '.join(missing)} table)" if missing else None


class Layout:
    """Paths inside one data directory."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.raw = self.root / "raw"
        self.snapshots = self.root / "snapshots"
        self.runs = self.root / "runs"
        self.current = self.root / "CURRENT"
        self.lock = self.root / "refresh.lock"
        self.state = self.root / "state"
        self.quarantine = self.root / "quarantine"
        self._unsynced: set[Path] = set()

    def inside(self, path: Path, what: str) -> Path:
        """``path`` itself, once it is known to stay inside the data directory with every
        symlink followed; else ``SnapshotError`` naming ``what`` (never an absolute path)."""
        if not path.resolve().is_relative_to(self.root):
            raise SnapshotError(f"{what} leads outside the data directory; refused")
        return path

    def snapshot_file(self, name: str) -> Path:
        """The snapshot file called ``name`` in ``snapshots/``: a plain ``*.duckdb`` name (no
        directory part, no ``..``) that stays inside the data directory."""
        if Path(name).name != name or not name.endswith(".duckdb") or name.startswith("."):
            raise SnapshotError("its snapshot file is not a plain <id>.duckdb name in "
                                "snapshots/ (a path, or ..); refused")
        return self.inside(self.snapshots / name, f"snapshots/{name}")

    def temp_dir(self) -> Path:
        """``tmp/`` in the data directory (created, private to its owner): where a validation
        process keeps any temporary file, so none is written outside the data directory."""
        tmp = self.inside(self.root / "tmp", "tmp")
        try:
            tmp.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as e:
            raise SnapshotError(f"tmp/ cannot be created in the data directory ({e.strerror}): "
                                "validation keeps its temporary files there") from None
        return tmp

    def ensure(self) -> None:
        """Create the directories, refusing any path of the layout that a symlink leads out
        of the data directory (a refresh writes, moves and deletes only inside it)."""
        for d in (self.raw, self.snapshots, self.runs):
            d.mkdir(parents=True, exist_ok=True)
        for name in ("raw", "snapshots", "runs", "state", "quarantine", "tmp", "refresh.lock"):
            self.inside(self.root / name, name)  # (a CURRENT leading out is replaced, not read)

    # ---------------------------------------------------------------- raw store
    def raw_path(self, sha256: str) -> Path:
        """Where the raw bytes with this sha256 live (``SnapshotError`` for anything but 64 hex
        digits: the name comes from a snapshot's rows)."""
        if not SHA256.fullmatch(sha256):
            raise SnapshotError(f"{sha256[:80]!r} is not a sha256; no raw file is named so")
        return self.raw / sha256[:2] / sha256

    def save_raw(self, body: bytes, sha256: str) -> str:
        """Store bytes under their sha256 (once); returns the path relative to the data dir."""
        path = self.raw_path(sha256)
        if not path.exists():
            atomic_write(path, body, sync_dir=False)
            self._unsynced.add(path.parent)
        return str(path.relative_to(self.root))

    def sync_raw(self) -> None:
        """fsync the raw store directories written since the last call (before publishing)."""
        for d in self._unsynced:
            _fsync_dir(d)
        self._unsynced.clear()

    # ---------------------------------------------------------------- source state
    def read_state(self, source: str) -> dict:
        """What ``source`` recorded with ``write_state`` ({} when nothing, or when the file is
        unreadable: it only ever saves work, so a lost one costs time, not data)."""
        try:
            data = json.loads((self.state / f"{source}.json").read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def write_state(self, source: str, data: dict) -> None:
        """Keep a small JSON fact for ``source`` outside the snapshots (written atomically): for
        what a run learns when it publishes nothing, such as "these pages give the rows the
        current snapshot already has"."""
        atomic_write(self.state / f"{source}.json", json.dumps(data, indent=1).encode())

    # ---------------------------------------------------------------- snapshots
    def read_current(self) -> SnapshotRef | None:
        """The published snapshot, or None before the first publish."""
        try:
            data = json.loads(self.inside(self.current, "CURRENT").read_text())
            path = self.snapshot_file(data["file"])
            if path.stem != data["id"]:
                raise ValueError(f"id {str(data['id'])[:80]!r} is not the file's")
            return SnapshotRef(id=data["id"], path=path,
                               published_at=datetime.fromisoformat(data["published_at"]))
        except FileNotFoundError:
            return None
        except SnapshotError as e:
            raise SnapshotError(f"CURRENT is refused: {e}") from e
        except OSError as e:
            raise SnapshotError(f"CURRENT is unreadable: {e.strerror}") from e
        except (ValueError, KeyError, TypeError) as e:
            raise SnapshotError(f"CURRENT is unreadable: {type(e).__name__}: {e}") from e

    def last_readable(self, skip: str | None = None) -> SnapshotRef | None:
        """The newest snapshot file DuckDB can read (other than the one with id ``skip``),
        with the time its refresh published it (from the run journal; else the file's)."""
        published = {r["snapshot_id"]: r["finished_at"] for r in self.read_runs()
                     if r.get("snapshot_id") and r.get("finished_at")}
        for path in sorted(self.snapshots.glob("*.duckdb"), reverse=True):  # ids sort by time
            if path.stem == skip or not path.resolve().is_relative_to(self.root) \
                    or unreadable(path) is not None:
                continue
            when = published.get(path.stem)
            at = datetime.fromisoformat(when) if when else \
                datetime.fromtimestamp(path.stat().st_mtime, UTC)
            return SnapshotRef(id=path.stem, path=path, published_at=at)
        return None

    def recover_current(self) -> dict | None:
        """When the published snapshot cannot be read (truncated, overwritten, missing): move
        it to ``quarantine/``, point CURRENT at the newest readable snapshot (or at nothing,
        so the next build starts from the sources) and say what was done; None when the
        current snapshot is fine. Call under the refresh lock."""
        why: str | None
        try:
            current = self.read_current()
        except SnapshotError as e:  # the pointer itself is damaged
            current, why = None, str(e)
        else:
            if current is None:
                return None
            why = unreadable(current.path)
            if why is None:
                return None
        moved = None
        if current is not None and current.path.exists():  # read_current: inside, plain name
            self.quarantine.mkdir(parents=True, exist_ok=True)
            moved = self.inside(self.quarantine, "quarantine/") / current.path.name
            os.replace(current.path, moved)
        for state in self.state.glob("*.json"):  # facts about the lost snapshot's rows
            state.unlink(missing_ok=True)
        good = self.last_readable()
        if good is None:
            self.current.unlink(missing_ok=True)
        else:
            pointer = {"id": good.id, "file": good.path.name,
                       "published_at": good.published_at.isoformat()}
            atomic_write(self.current, json.dumps(pointer).encode())
        return {"corrupt_snapshot": current.id if current else None, "reason": why,
                "quarantined_to": str(moved.relative_to(self.root)) if moved else None,
                "rebuilt_from": good.id if good else None}

    def staging_path(self, snapshot_id: str) -> Path:
        """The staging file of a snapshot being built."""
        return self.snapshots / f"{snapshot_id}.duckdb.partial"

    def start_staging(self, snapshot_id: str) -> Path:
        """A new staging file: a copy of the current snapshot, or nothing on the first run."""
        staging = self.staging_path(snapshot_id)
        current = self.read_current()
        if current is not None:
            shutil.copyfile(current.path, staging)
        return staging

    # ------------------------------------------------------- time from the data
    def newest_known(self) -> datetime | None:
        """The latest time the store has recorded: the current snapshot's publish time and
        the time in the newest snapshot, run or pointer id (ids are UTC times)."""
        try:
            current = self.read_current()
        except SnapshotError:
            current = None
        names = [max((p.stem for p in d.glob(pattern)), default="")
                 for d, pattern in ((self.snapshots, "*.duckdb"), (self.runs, "*.json"))]
        times = [t for t in map(id_time, [*names, current.id if current else ""]) if t]
        if current is not None:
            times.append(current.published_at)
        return max(times, default=None)

    def clock_behind(self) -> float:
        """Seconds the system clock is behind the newest time the store recorded (0 when it
        is not): a clock set back is reported, never trusted to order snapshots."""
        newest = self.newest_known()
        return max(0.0, (newest - datetime.now(UTC)).total_seconds()) if newest else 0.0

    def next_id(self) -> str:
        """A new run (and snapshot) id: a UTC time and a random suffix that sorts after every
        id the store holds, whatever the clock says. The ids are the store's sequence: they
        order snapshots, runs, recovery and retention."""
        newest = self.newest_known()
        moment = datetime.now(UTC)
        if newest is not None:
            moment = max(moment, newest + timedelta(microseconds=1))
        return moment.strftime(ID_TIME) + "-" + secrets.token_hex(3)

    def publish_time(self) -> datetime:
        """When a snapshot published now is published: the clock's time, or one second after
        the newest recorded time when the clock is not past it (``Last-Modified`` never goes
        backwards, and HTTP dates have whole seconds)."""
        now = datetime.now(UTC)
        newest = self.newest_known()
        if newest is None or now.replace(microsecond=0) > newest.replace(microsecond=0):
            return now
        return newest.replace(microsecond=0) + timedelta(seconds=1)

    def publish(self, staging: Path, snapshot_id: str,
                published_at: datetime | None = None) -> SnapshotRef:
        """Make a finished staging file the current snapshot: fsync, rename, swap the pointer
        (published at ``published_at``, default ``publish_time()``)."""
        final = self.snapshots / f"{snapshot_id}.duckdb"
        with open(staging, "rb") as f:
            os.fsync(f.fileno())
        os.replace(staging, final)
        _fsync_dir(self.snapshots)
        published_at = published_at or self.publish_time()
        pointer = {"id": snapshot_id, "file": final.name, "published_at": published_at.isoformat()}
        atomic_write(self.current, json.dumps(pointer).encode())
        return SnapshotRef(id=snapshot_id, path=final, published_at=published_at)

    def clean_partials(self) -> list[Path]:
        """Remove staging files and temp files left by a killed refresh (call under the lock)."""
        removed = []
        for p in list(self.snapshots.glob("*.partial")) + list(self.snapshots.glob("*.partial.wal")):
            p.unlink(missing_ok=True)
            removed.append(p)
        for p in self.snapshots.glob("*.partial.tmp"):  # DuckDB's spill directory
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
        for p in self.root.rglob(".*.tmp"):
            p.unlink(missing_ok=True)
            removed.append(p)
        return removed

    def prune(self, keep: int, max_age_days: float | None = None) -> list[Path]:
        """Delete the oldest snapshot files beyond ``keep`` and those older than
        ``max_age_days``; never the current one, never the raw store."""
        import time

        current = self.read_current()
        files = sorted(self.snapshots.glob("*.duckdb"))
        victims = set(files[:-keep])
        if max_age_days is not None:
            cutoff = time.time() - max_age_days * 86400
            victims |= {p for p in files if p.stat().st_mtime < cutoff}
        doomed = sorted(p for p in victims if current is None or p != current.path)
        for p in doomed:
            p.unlink(missing_ok=True)
        return doomed

    # ---------------------------------------------------------------- run journal
    def write_run(self, run: dict) -> None:
        """Record one refresh run (atomically). An ``OSError`` names the record's file (a
        write that fails on a full disk does not say which file by itself)."""
        path = self.runs / f"{run['id']}.json"
        try:
            atomic_write(path, json.dumps(run, default=str).encode())
        except OSError as e:
            if e.filename is None:
                raise OSError(e.errno, e.strerror or str(e), str(path)) from e
            raise

    def read_runs(self) -> list[dict]:
        """Every recorded run, newest first. A record (or ``runs/`` itself) leading outside the
        data directory is none of its runs: never read (the refresh refuses such a layout)."""
        runs = []
        for p in sorted(self.runs.glob("*.json"), reverse=True):
            if not p.resolve().is_relative_to(self.root):
                continue
            try:
                runs.append(json.loads(p.read_text()))
            except (OSError, ValueError):
                continue  # a run record being replaced right now; the next read sees it
        return runs


class RefreshLock:
    """An exclusive ``flock`` on ``refresh.lock``. The OS releases it when the holder dies,
    so a lock left by a killed refresh is taken over without any stale-pid guessing."""

    def __init__(self, layout: Layout) -> None:
        self.path = layout.lock
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise ``RefreshLocked`` naming the holder's pid and start time."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:  # a read-only data directory: one line, not a traceback
            raise SnapshotError(f"the refresh lock ({self.path.name}) cannot be opened: "
                                f"{e.strerror}") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode(errors="replace").strip()
            os.close(fd)
            try:
                info = json.loads(holder)
                who = f"pid {info['pid']}, started {info['started']}"
            except (ValueError, KeyError):
                who = "holder unknown"
            raise RefreshLocked(f"refresh already running ({who})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(),
                                  "started": datetime.now(UTC).isoformat()}).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Release the lock."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RefreshLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
