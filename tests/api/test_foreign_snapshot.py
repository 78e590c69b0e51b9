"""A snapshot file of another schema (a DuckDB database, but not perfledger's) is a health
state, never a 500: /healthz 200 naming it, /readyz 503 when nothing valid is left, the last
good snapshot served otherwise, and the next refresh quarantines it and rebuilds on the last
good one."""

from __future__ import annotations

import json
from datetime import timedelta

import duckdb
import pytest

from ingest.refresh import refresh
from tests.conftest import make_settings, write_sources
from warehouse.storage.store import ID_TIME, REQUIRED_TABLES, Layout, id_time

GOOD = "20261201T000000000000Z-aaaaaa"


def _plant_foreign(var) -> str:
    """A DuckDB file with a table of its own, published as the current snapshot."""
    foreign_id = (id_time(GOOD) + timedelta(seconds=1)).strftime(ID_TIME) + "-ffffff"
    con = duckdb.connect(str(var / "snapshots" / f"{foreign_id}.duckdb"))
    con.execute("CREATE TABLE results AS SELECT 1 AS id")
    con.close()
    pointer = json.loads((var / "CURRENT").read_text())
    (var / "CURRENT").write_text(json.dumps({**pointer, "id": foreign_id,
                                             "file": f"{foreign_id}.duckdb"}))
    return foreign_id


@pytest.fixture
def settings(data_dir, tmp_path):
    return make_settings(tmp_path, write_sources(tmp_path / "s.toml"))


def test_the_last_good_snapshot_is_served_and_health_names_the_foreign_one(data_dir, settings,
                                                                           client_for):
    foreign_id = _plant_foreign(data_dir)
    client = client_for(settings)
    r = client.get("/v1/sources")
    assert r.status_code == 200 and r.json()["snapshot_id"] == GOOD
    health = client.get("/healthz")
    assert health.status_code == 200
    body = health.json()
    assert body["status"] == "degraded" and body["corrupt"]["snapshot_id"] == foreign_id
    assert "not a perfledger snapshot" in body["corrupt"]["reason"]
    assert client.get("/readyz").status_code == 200


def test_with_nothing_valid_left_data_routes_503_and_readiness_says_so(data_dir, settings,
                                                                       client_for):
    _plant_foreign(data_dir)
    (data_dir / "snapshots" / f"{GOOD}.duckdb").unlink()
    client = client_for(settings)
    for path in ("/v1/sources", "/v1/results", "/v1/meta"):
        assert client.get(path).status_code == 503, path
    health = client.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "unavailable"
    assert client.get("/readyz").status_code == 503


def test_the_next_refresh_quarantines_it_and_rebuilds_on_the_last_good(data_dir, settings,
                                                                       client_for):
    foreign_id = _plant_foreign(data_dir)
    report = refresh(settings)
    assert report.status in ("published", "unchanged"), report.message
    assert any(f"corrupt snapshot {foreign_id} (not a perfledger snapshot" in n
               for n in report.notes), report.notes
    assert (data_dir / "quarantine" / f"{foreign_id}.duckdb").exists()
    assert Layout(data_dir).read_current().id == GOOD
    assert client_for(settings).get("/healthz").json()["corrupt"] is None


def test_the_required_tables_are_tables_of_the_schema():
    from warehouse.model.schema import empty_warehouse

    tables = {r[0] for r in empty_warehouse().execute(
        "SELECT table_name FROM duckdb_tables()").fetchall()}
    assert set(REQUIRED_TABLES) <= tables
