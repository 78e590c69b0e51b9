"""A published snapshot that cannot be read is survivable: the API names it and serves the last
readable one (503 on data routes only when none is left), /healthz stays 200 and /readyz says
whether anything can be served; the next refresh quarantines it, rebuilds on the last good
snapshot and publishes."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta

import pytest

from ingest.refresh import refresh
from tests.conftest import full_sources, make_settings, mount_azure
from warehouse.storage.store import ID_TIME, id_time


def _second_snapshot(tmp):
    """Publish a byte copy of the current snapshot under a newer id (as a refresh would), and
    return (old id, new id, new file)."""
    var = tmp / "var"
    pointer = json.loads((var / "CURRENT").read_text())
    old_id = pointer["id"]
    # sorts right after the first (an id hours ahead of the clock would read as a clock behind)
    new_id = (id_time(old_id) + timedelta(milliseconds=1)).strftime(ID_TIME) + "-ffffff"
    new_file = var / "snapshots" / f"{new_id}.duckdb"
    shutil.copyfile(var / "snapshots" / pointer["file"], new_file)
    (var / "CURRENT").write_text(json.dumps({**pointer, "id": new_id, "file": new_file.name}))
    return old_id, new_id, new_file


def _truncate(path):
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 2)


def _overwrite(path):
    path.write_bytes(b"not a database " * 1000)


@pytest.mark.parametrize("damage", [_truncate, _overwrite], ids=["truncated", "overwritten"])
def test_a_corrupt_current_snapshot_is_survived_and_rebuilt(full_copy, client_for, server,
                                                             damage):
    tmp, _ = full_copy
    old_id, new_id, new_file = _second_snapshot(tmp)
    settings = make_settings(tmp, tmp / "sources.toml")
    serving = client_for(settings)  # a worker that already has the new snapshot open
    assert serving.get("/v1/results?limit=1").json()["snapshot_id"] == new_id
    damage(new_file)
    assert serving.get("/v1/results?limit=1").json()["snapshot_id"] == new_id  # still open
    serving.app.state.reader.close()  # (DuckDB shares an open file within one process)

    fresh = client_for(settings)  # a worker started after the damage
    r = fresh.get("/v1/results?limit=1")
    assert r.status_code == 200 and r.json()["snapshot_id"] == old_id and r.json()["rows"]
    health = fresh.get("/healthz")
    assert health.status_code == 200
    body = health.json()
    assert body["status"] == "degraded" and body["snapshot_id"] == old_id
    assert body["corrupt"]["snapshot_id"] == new_id
    assert body["corrupt"]["message"] == f"corrupt snapshot {new_id}"
    assert fresh.get("/readyz").status_code == 200
    fresh.app.state.reader.close()

    # nothing readable left: data routes 503, health 200 and says so, readiness 503
    _overwrite(tmp / "var" / "snapshots" / f"{old_id}.duckdb")
    last = client_for(settings)
    assert last.get("/v1/results?limit=1").status_code == 503
    health = last.get("/healthz")
    assert health.status_code == 200
    assert health.json()["status"] == "unavailable"
    assert f"corrupt snapshot {new_id}" in health.json()["reason"]
    assert last.get("/readyz").status_code == 503
    last.app.state.reader.close()

    # the next refresh quarantines the damaged file and builds anew from the sources
    mount_azure(server, page_size=4)
    sources = full_sources(tmp / "sources2.toml", server)
    report = refresh(make_settings(tmp, sources))
    assert report.status == "published", report.as_dict()
    assert any(f"corrupt snapshot {new_id}" in n for n in report.notes)
    assert (tmp / "var" / "quarantine" / new_file.name).exists()
    healed = client_for(settings)
    assert healed.get("/healthz").json()["status"] == "ok"
    assert healed.get("/healthz").json()["corrupt"] is None
    assert healed.get("/v1/results?limit=1&division=all&availability=all").json()["total"] == 492


def test_a_refresh_rebuilds_on_the_last_good_snapshot(full_copy, client_for, server):
    tmp, _ = full_copy
    old_id, new_id, new_file = _second_snapshot(tmp)
    _truncate(new_file)
    mount_azure(server, page_size=4)
    sources = full_sources(tmp / "sources2.toml", server)
    report = refresh(make_settings(tmp, sources))
    assert any(f"rebuilding from snapshot {old_id}" in n for n in report.notes)
    assert report.status in ("published", "unchanged"), report.as_dict()
    current = json.loads((tmp / "var" / "CURRENT").read_text())["id"]
    assert current != new_id
    client = client_for(make_settings(tmp, sources))
    assert client.get("/healthz").json()["corrupt"] is None
    assert client.get("/v1/results?limit=1&division=all&availability=all").json()["total"] == 492


@pytest.mark.parametrize("pointer", ['{"id": "2026', "outside"], ids=["truncated", "outside"])
def test_a_damaged_current_does_not_stop_a_warmed_server_starting(full_copy, tmp_path, pointer):
    """With the warm-up on (the default), a truncated CURRENT, or one leading outside the data
    dir, made the server's start fail ("Application startup failed"); it now starts, answers
    503 on data routes and /readyz with the reason, and 200 on /healthz."""
    from fastapi.testclient import TestClient

    from api.app import create_app

    tmp, sources = full_copy
    current = tmp / "var" / "CURRENT"
    if pointer == "outside":
        outside = tmp_path / "elsewhere.json"
        outside.write_text(current.read_text())
        current.unlink()
        current.symlink_to(outside)
    else:
        current.write_text(pointer)
    app = create_app(make_settings(tmp, sources, api_warm=True))
    with TestClient(app) as client:  # runs the lifespan: the start that failed
        data = client.get("/v1/results?limit=1")
        assert data.status_code == 503 and "CURRENT is" in data.text
        assert client.get("/readyz").status_code == 503
        assert client.get("/healthz").status_code == 200
    app.state.reader.close()


def test_run_records_leading_outside_the_data_dir_are_never_read(full_copy, client_for,
                                                                 tmp_path):
    """A run record symlinked to a file outside the data dir was served by /v1/refreshes and
    /healthz (and turned health degraded); the API reads inside the data dir only."""
    tmp, sources = full_copy
    runs = tmp / "var" / "runs"
    [newest] = sorted(runs.glob("*.json"))[-1:]
    record = json.loads(newest.read_text())
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({**record, "status": "failed", "message": "OUTSIDE-RUN",
                                   "run_id": "29991231T000000000000Z-0utside"}))
    (runs / "29991231T000000000000Z-0utside.json").symlink_to(outside)
    client = client_for(make_settings(tmp, sources))
    for path in ("/v1/refreshes", "/healthz"):
        r = client.get(path)
        assert r.status_code == 200 and "OUTSIDE-RUN" not in r.text
    assert client.get("/healthz").json()["status"] == "ok"
