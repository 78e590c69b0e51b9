"""warehouse.export: every table and view as a file, with a manifest whose row counts and
hashes describe the files written."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import duckdb
import pyarrow.parquet as pq
import pytest

from warehouse.exceptions import ConfigError
from warehouse.export import export
from warehouse.schema import create_all
from warehouse.store import Layout


@pytest.fixture
def ref(tmp_path):
    from warehouse import derived

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
