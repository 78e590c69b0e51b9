"""warehouse.storage.staging: nothing is copied until a source writes; a failed source's writes are
rolled back; the published snapshot is never written to."""

from __future__ import annotations

import hashlib

import duckdb
import pytest

from warehouse.model.schema import create_all
from warehouse.storage.staging import Staging
from warehouse.storage.store import Layout


def published(tmp_path) -> Layout:
    """A data directory whose current snapshot has one claim_history-free table row."""
    layout = Layout(tmp_path / "var")
    layout.ensure()
    staging = layout.start_staging("first")
    con = duckdb.connect(str(staging))
    create_all(con)
    con.execute("INSERT INTO rule_pin VALUES ('v6.1', 'abc')")
    con.close()
    layout.publish(staging, "first")
    return layout


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reads_come_from_the_published_snapshot_until_a_write(tmp_path):
    layout = published(tmp_path)
    before = digest(layout.read_current().path)
    stage = Staging(layout, "second", 64)
    assert stage.reader().execute("SELECT * FROM rule_pin").fetchall() == [("v6.1", "abc")]
    assert not stage.opened and not layout.staging_path("second").exists()
    stage.discard()
    assert digest(layout.read_current().path) == before


def test_the_first_write_copies_and_a_rollback_keeps_the_last_good_rows(tmp_path):
    layout = published(tmp_path)
    before = digest(layout.read_current().path)
    opened = []
    stage = Staging(layout, "second", 64, on_open=lambda: opened.append(True))
    stage.begin()  # source one changes rows, then fails
    stage.connection().execute("DELETE FROM rule_pin")
    assert opened == [True] and stage.opened
    stage.rollback()
    stage.begin()  # source two succeeds
    stage.connection().execute("INSERT INTO rule_pin VALUES ('v6.0', 'def')")
    stage.commit()
    assert sorted(stage.reader().execute("SELECT round FROM rule_pin").fetchall()) == [
        ("v6.0",), ("v6.1",)]
    path = stage.close()
    assert path == layout.staging_path("second") and path.exists()
    assert digest(layout.read_current().path) == before  # the published file is untouched
    with pytest.raises(RuntimeError, match="not reopened"):
        stage.connection()
    stage.discard()
    assert not path.exists()


def test_first_refresh_stages_an_empty_warehouse(tmp_path):
    layout = Layout(tmp_path / "var")
    layout.ensure()
    stage = Staging(layout, "first", 64)
    tables = {r[0] for r in stage.reader().execute(
        "SELECT table_name FROM duckdb_tables()").fetchall()}
    assert {"mlperf_result", "source_snapshot", "azure_price"} <= tables
    assert stage.opened  # no published snapshot to read: staging opened at once
    stage.discard()
