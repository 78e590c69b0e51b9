"""warehouse.storage.export: every table and view as a file, with a manifest whose row counts and
hashes describe the files written."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from warehouse.exceptions import ConfigError
from warehouse.model.schema import create_all
from warehouse.storage.export import export
from warehouse.storage.store import Layout


@pytest.fixture
def ref(tmp_path):
    from warehouse.figures import derived

    layout = Layout(tmp_path / "var")
    layout.ensure()
    staging = layout.start_staging("snap")
    con = duckdb.connect(str(staging))
    create_all(con)
    derived.install(con)
    con.execute("INSERT INTO rule_pin VALUES ('v6.1', 'abc'), ('v6.0', 'def')")
    con.execute("INSERT INTO source_snapshot VALUES ('s1', 'mlperf', 'mlperf_summary', 'v6.1', "
                "'https://x/summary.csv', ?, 'ab', 2, NULL, NULL, 'p/1', 'raw/ab/ab')",
                [datetime(2026, 11, 1, tzinfo=UTC)])
    con.close()
    return layout.publish(staging, "snap")


def test_parquet_export_and_manifest(ref, tmp_path):
    out = tmp_path / "out"
    manifest = export(ref, out)
    assert json.loads((out / "manifest.json").read_text()) == json.loads(
        json.dumps(manifest, default=str))
    files = {f["name"]: f for f in manifest["files"]}
    assert files["rule_pin"]["rows"] == 2 and files["scenario_ratio"]["kind"] == "view"
    for f in manifest["files"]:
        path = out / f["file"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == f["sha256"]
        assert pq.read_table(path).num_rows == f["rows"]
    assert sorted(pq.read_table(out / "rule_pin.parquet").column("round").to_pylist()) == [
        "v6.0", "v6.1"]
    assert manifest["snapshot_id"] == "snap"
    assert [s["id"] for s in manifest["sources"]] == ["s1"]


def test_csv_export_and_unknown_format(ref, tmp_path):
    manifest = export(ref, tmp_path / "csv", "csv")
    text = (tmp_path / "csv" / "rule_pin.csv").read_text().splitlines()
    assert text[0] == "round,sha256" and len(text) == 3
    assert {f["file"].rsplit(".", 1)[1] for f in manifest["files"]} == {"csv"}
    with pytest.raises(ConfigError, match="parquet or csv"):
        export(ref, tmp_path / "x", "xlsx")


def test_parquet_export_carries_the_comments_and_the_types(ref, tmp_path):
    """Each column's COMMENT (read from the snapshot's own catalog here) is in the Parquet
    field metadata and the manifest; an empty table keeps its declared types."""
    out = tmp_path / "out"
    manifest = export(ref, out)
    con = duckdb.connect(str(ref.path), read_only=True)
    declared = {(t, c): (kind, comment or "") for t, c, kind, comment in con.execute(
        "SELECT table_name, column_name, data_type, comment FROM duckdb_columns() "
        "WHERE schema_name = 'main'").fetchall()}
    table_comment = dict(con.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall())
    con.close()
    files = {f["name"]: f for f in manifest["files"]}
    for name in ("rule_pin", "mlperf_result", "source_snapshot", "scenario_ratio"):
        schema = pq.read_schema(out / files[name]["file"])
        for field in schema:
            kind, comment = declared[(name, field.name)]
            assert (field.metadata or {}).get(b"comment", b"").decode() == comment
        assert [c["comment"] for c in files[name]["columns"]] == [
            declared[(name, f.name)][1] for f in schema]
        assert [c["type"] for c in files[name]["columns"]] == [
            declared[(name, f.name)][0] for f in schema]
    assert pq.read_schema(out / "rule_pin.parquet").metadata[b"comment"].decode() == \
        table_comment["rule_pin"]
    assert any(c["comment"] for c in files["mlperf_result"]["columns"])
    empty = pq.read_schema(out / "mlperf_result.parquet")  # no rows: still typed
    assert str(empty.field("result").type) == "double"
    assert str(empty.field("round").type) == "string"


def test_decimals_become_doubles_for_pandas():
    """pandas would read a Parquet decimal as ``decimal.Decimal`` objects."""
    from decimal import Decimal

    import pyarrow as pa

    from warehouse.storage.export import for_parquet

    t = pa.table({"rate": pa.array([Decimal("10.50"), None], pa.decimal128(10, 2)),
                  "n": pa.array([None, None], pa.string())})
    out = for_parquet(t, {"rate": "USD per hour"}, "a table")
    assert out.schema.field("rate").type == pa.float64() and out.column("rate").to_pylist() == [
        10.5, None]
    assert out.schema.field("n").type == pa.string()
    assert out.schema.field("rate").metadata == {b"comment": b"USD per hour"}
    assert out.schema.metadata == {b"comment": b"a table"}


def test_an_export_over_existing_files_is_refused_without_force(ref, tmp_path):
    out = tmp_path / "out"
    first = export(ref, out, "csv")
    (out / "notes.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(ConfigError, match=r"already holds manifest.json, .*--force"):
        export(ref, out, "csv")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    again = export(ref, out, "csv", force=True)
    assert again["exported_at"] >= first["exported_at"]
    assert (out / "notes.txt").read_text() == "mine"  # only same-named files are replaced
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_full_disk_mid_export_leaves_nothing_and_says_so_in_one_line(ref, tmp_path,
                                                                       monkeypatch, fmt):
    """The third file's write hits a real ENOSPC (it goes to /dev/full): one line naming the
    file, and neither the files written before it nor the hidden folder are left."""
    import tempfile

    from warehouse.exceptions import ExportError

    con = duckdb.connect(str(ref.path), read_only=True)
    from warehouse.model.catalog import entries
    third = entries(con)[2]["name"]
    con.close()
    real = tempfile.mkdtemp

    def planted(*args, **kwargs):
        work = real(*args, **kwargs)
        os.symlink("/dev/full", os.path.join(work, f"{third}.{fmt}"))
        return work

    monkeypatch.setattr(tempfile, "mkdtemp", planted)
    for out in (tmp_path / "new", tmp_path / "existing"):
        if out.name == "existing":
            out.mkdir()
            (out / "keep.txt").write_text("x")
        with pytest.raises(ExportError) as e:
            export(ref, out, fmt)
        assert "\n" not in e.value.message and "disk full" in e.value.message
        assert f"{third}.{fmt}" in e.value.message and "nothing was written" in e.value.message
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["var", "existing"] if out.name == "existing" else ["var"])
        if out.exists():
            assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_an_unwritable_or_odd_target_is_one_line(ref, tmp_path):
    from warehouse.exceptions import ExportError

    (tmp_path / "file").write_text("x")
    with pytest.raises(ExportError, match="^export to .* failed, nothing was written: I/O error"):
        export(ref, tmp_path / "file" / "out")
    with pytest.raises(ConfigError, match="is not a directory"):
        export(ref, Path("/dev/full"))
