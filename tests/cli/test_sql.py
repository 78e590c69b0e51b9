"""``perfledger sql`` reads and nothing else: DuckDB's own guards refuse every statement that
would write a file, reach the network, attach another database or change the configuration,
each with one line; a plain query still answers."""

from __future__ import annotations

import json

import duckdb
import pytest

from warehouse.storage.db import GUARD_SQL


def test_a_query_answers(perfledger):
    code, out, _ = perfledger("sql", "-c", "SELECT source, label FROM source_snapshot")
    assert code == 0 and "mlperf" in out and "v6.1" in out


@pytest.mark.parametrize("statement", [
    "COPY source_snapshot TO '{var}/../copied.csv'",
    "COPY (SELECT 1) TO '{var}/CURRENT' (FORMAT csv, HEADER false)",
    "COPY (SELECT 'fake' AS id, 'published' AS status) TO '{var}/runs/fake.json' (FORMAT json)",
    "EXPORT DATABASE '{var}/../exported'",
    "PRAGMA profiling_output = '{var}/../profile.txt'",
    "SET enable_external_access = true",
    "ATTACH '{var}/../other.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT * FROM read_csv('/etc/passwd')",
])
def test_writes_and_outside_access_are_refused_with_one_line(perfledger, data_dir, statement):
    before = sorted(p.relative_to(data_dir.parent) for p in data_dir.parent.rglob("*"))
    current = (data_dir / "CURRENT").read_bytes()
    code, out, err = perfledger("sql", "-c", statement.format(var=data_dir))
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("PerfledgerError: ")
    assert "disabled" in err or "locked" in err
    assert sorted(p.relative_to(data_dir.parent) for p in data_dir.parent.rglob("*")) == before
    assert (data_dir / "CURRENT").read_bytes() == current
    assert json.loads(current)["file"].endswith(".duckdb")


def test_the_api_connection_is_guarded_too(data_dir, tmp_path):
    """The API attaches the snapshot to an in-memory database, then locks it the same way."""
    from api.snapshot import SnapshotReader
    from warehouse.storage.store import Layout

    reader = SnapshotReader(Layout(data_dir), check_interval=0)
    try:
        cur = reader.get().cursor()
        assert cur.execute("SELECT count(*) FROM source_snapshot").fetchone() == (1,)
        for statement in (f"COPY source_snapshot TO '{tmp_path}/out.csv'",
                          "SET enable_external_access = true", "INSTALL httpfs",
                          f"ATTACH '{tmp_path}/x.duckdb' AS x"):
            with pytest.raises(duckdb.Error):
                cur.execute(statement)
        assert not (tmp_path / "out.csv").exists() and not (tmp_path / "x.duckdb").exists()
    finally:
        reader.close()


def test_the_shell_guards_lock_the_configuration():
    """What ``perfledger sql`` passes to the duckdb shell (``-cmd``) locks a connection."""
    con = duckdb.connect()
    con.execute(GUARD_SQL)
    with pytest.raises(duckdb.Error, match="locked"):
        con.execute("SET enable_external_access = true")
