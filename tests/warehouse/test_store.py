"""warehouse.storage.store: the raw store, publishing, retention, the run journal and the lock."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from warehouse.exceptions import RefreshLocked, SnapshotError
from warehouse.storage.store import Layout, RefreshLock, atomic_write


@pytest.fixture
def layout(tmp_path) -> Layout:
    layout = Layout(tmp_path / "var")
    layout.ensure()
    return layout


def test_raw_bytes_are_stored_once_under_their_sha256(layout):
    body = b"summary,csv\n1,2\n"
    sha = hashlib.sha256(body).hexdigest()
    rel = layout.save_raw(body, sha)
    assert rel == f"raw/{sha[:2]}/{sha}" and (layout.root / rel).read_bytes() == body
    mtime = (layout.root / rel).stat().st_mtime_ns
    assert layout.save_raw(body, sha) == rel
    assert (layout.root / rel).stat().st_mtime_ns == mtime  # not written again
    layout.sync_raw()


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "d" / "CURRENT"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["CURRENT"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)


def test_publish_moves_staging_and_swaps_the_pointer(layout):
    assert layout.read_current() is None
    staging = layout.start_staging("s1")
    assert not staging.exists()  # nothing to copy before the first publish
    staging.write_bytes(b"first")
    ref = layout.publish(staging, "s1")
    assert layout.read_current() == ref and ref.path.read_bytes() == b"first"
    assert not staging.exists()
    copy = layout.start_staging("s2")
    assert copy.read_bytes() == b"first"  # a new staging file starts from the current one
    assert json.loads(layout.current.read_text())["file"] == "s1.duckdb"


def test_an_unreadable_pointer_is_a_snapshot_error(layout):
    layout.current.write_text("{half")
    with pytest.raises(SnapshotError, match="CURRENT is unreadable"):
        layout.read_current()


def test_prune_keeps_the_newest_and_never_the_current(layout):
    for name in ("a", "b", "c", "d"):
        staging = layout.start_staging(name)
        staging.write_bytes(name.encode())
        layout.publish(staging, name)
    current = layout.read_current()
    layout.current.write_text(json.dumps({"id": "a", "file": "a.duckdb",  # the oldest
                                          "published_at": current.published_at.isoformat()}))
    removed = layout.prune(keep=2)
    assert [p.name for p in removed] == ["b.duckdb"]
    assert sorted(p.name for p in layout.snapshots.glob("*.duckdb")) == ["a.duckdb", "c.duckdb",
                                                                         "d.duckdb"]


def test_clean_partials_removes_what_a_killed_refresh_left(layout):
    partial = layout.staging_path("dead")
    partial.write_bytes(b"x")
    partial.with_name(partial.name + ".wal").write_bytes(b"x")
    tmp = layout.root / "runs" / ".r.json.123.tmp"
    tmp.write_bytes(b"x")
    removed = layout.clean_partials()
    assert len(removed) == 3 and not any(p.exists() for p in removed)


def test_run_journal_is_newest_first_and_skips_a_record_being_written(layout):
    layout.write_run({"id": "20261201T000000Z-a", "status": "published"})
    layout.write_run({"id": "20261202T000000Z-b", "status": "failed"})
    (layout.runs / "20261203T000000Z-c.json").write_text("{torn")
    assert [r["id"] for r in layout.read_runs()] == ["20261202T000000Z-b", "20261201T000000Z-a"]


def test_the_lock_is_exclusive_and_names_its_holder(layout):
    with RefreshLock(layout):
        with pytest.raises(RefreshLocked, match=rf"pid {os.getpid()}, started 20"):
            RefreshLock(layout).acquire()
    with RefreshLock(layout):  # released on exit: taken again
        pass


def test_source_state_round_trips_and_a_bad_file_reads_as_nothing(tmp_path):
    layout = Layout(tmp_path)
    assert layout.read_state("azure_prices") == {}
    layout.write_state("azure_prices", {"same_as": "a", "digests": ["b", "c"]})
    assert Layout(tmp_path).read_state("azure_prices") == {"same_as": "a", "digests": ["b", "c"]}
    for bad in (b'{"same_as": "a", "dig', b"[1, 2]", b"\xff\xfe"):
        (tmp_path / "state" / "azure_prices.json").write_bytes(bad)
        assert layout.read_state("azure_prices") == {}  # costs a parse, never a wrong skip
