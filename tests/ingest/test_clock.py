"""Time from the data, not the wall clock: when the clock is behind the newest snapshot (set
back after a publish), ids and publish times continue from the store's, Last-Modified never
goes backwards, as_of "now" is the current snapshot, the run record and /healthz say so, and
data an earlier refresh accepted is not refused as "in the future"."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import duckdb
import pytest

from ingest.refresh import refresh
from tests.conftest import make_settings, publish_small, write_sources
from tests.helpers import REPO
from warehouse.storage.store import Layout

ID_TIME = "%Y%m%dT%H%M%S%fZ"  # the time part of a snapshot id


def _published_ahead(var, ahead: timedelta) -> tuple[str, datetime]:
    """A snapshot (and its run) published ``ahead`` of now: what the store holds when the
    clock is set back by ``ahead`` right after that publish."""
    layout = Layout(var)
    layout.ensure()
    at = datetime.now(UTC) + ahead
    snapshot_id = at.strftime(ID_TIME) + "-abcdef"
    path = publish_small(layout, snapshot_id)
    run = {"id": snapshot_id, "started_at": at.isoformat(), "finished_at": at.isoformat(),
           "status": "published", "snapshot_id": snapshot_id, "message": "", "sources": []}
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO refresh_run VALUES (?, ?, ?, 'published', ?, '[]', '')",
                [snapshot_id, at, at, snapshot_id])
    con.close()
    (layout.runs / f"{snapshot_id}.json").write_text(json.dumps(run))
    pointer = json.loads(layout.current.read_text())
    layout.current.write_text(json.dumps({**pointer, "published_at": at.isoformat()}))
    return snapshot_id, at


@pytest.fixture
def curated_ahead(tmp_path):
    """The repository's curated files, one spec and one claim checked two days from now."""
    data = tmp_path / "data"
    shutil.copytree(REPO / "data", data)
    soon = (datetime.now(UTC) + timedelta(days=2)).date().isoformat()
    for name in ("hardware.yaml", "claims.yaml"):
        text = (data / name).read_text()
        (data / name).write_text(text.replace("checked_on: 2026-10-25", f"checked_on: {soon}", 1))
    return write_sources(tmp_path / "sources.toml", curated=f'dir = "{data}"')


def test_a_clock_set_back_continues_from_the_store(tmp_path, curated_ahead, client_for):
    old_id, old_at = _published_ahead(tmp_path / "var", timedelta(days=3))
    settings = make_settings(tmp_path, curated_ahead)
    before = client_for(settings).get("/v1/claims")
    report = refresh(settings)
    assert report.status == "published", report.message  # specs checked "in 2 days" pass
    assert report.snapshot_id > old_id and report.finished_at > old_at
    assert report.clock_behind_seconds >= 3 * 86400 - 60
    assert any("clock is" in n and "behind" in n for n in report.notes)
    recorded = json.loads((tmp_path / "var" / "runs" / f"{report.id}.json").read_text())
    assert recorded["clock_behind_seconds"] == report.clock_behind_seconds

    client = client_for(settings)
    after = client.get("/v1/claims")
    assert after.json()["snapshot_id"] == report.snapshot_id
    assert after.headers["last-modified"] != before.headers["last-modified"]
    since = client.get("/v1/claims", headers={"If-Modified-Since": before.headers["last-modified"]})
    assert since.status_code == 200  # changed data is never a 304
    # as_of by the store's order: "now" for a client whose clock is right (past the old
    # publish) is the new snapshot, never the one it superseded
    moment = old_at + timedelta(seconds=10)
    current = client.get("/v1/claims", params={"as_of": moment.isoformat()}).json()
    assert current.get("snapshot_id") == report.snapshot_id, current
    then = client.get("/v1/claims", params={"as_of": old_at.isoformat()}).json()
    assert then["snapshot_id"] == old_id
    health = client.get("/healthz").json()
    assert health["status"] == "degraded"
    assert health["last_refresh"]["clock_behind_seconds"] >= 3 * 86400 - 60


def test_ids_and_publish_times_follow_the_store_not_the_clock(tmp_path):
    layout = Layout(tmp_path / "var")
    old_id, old_at = _published_ahead(layout.root, timedelta(hours=3))
    assert layout.clock_behind() > 3 * 3600 - 60
    new = layout.next_id()
    assert new > old_id and datetime.strptime(new[:22], ID_TIME).replace(tzinfo=UTC) > old_at
    at = layout.publish_time()
    assert at > old_at and format_datetime(at, usegmt=True) != format_datetime(old_at,
                                                                               usegmt=True)


def test_a_right_clock_is_used_as_it_is(tmp_path):
    layout = Layout(tmp_path / "var")
    layout.ensure()
    publish_small(layout, datetime.now(UTC).strftime(ID_TIME) + "-aaaaaa")
    # a publish a few ms "ahead" of the next reading of the clock is not a clock behind (the
    # refresh reports one only past 2 s); this test raced at exactly 0 once
    assert layout.clock_behind() < 1
    assert abs(layout.publish_time() - datetime.now(UTC)) < timedelta(seconds=2)


def _as_written_ahead(var, ahead: timedelta) -> None:
    """The current snapshot as a clock ``ahead`` of now would have written it (its fetches and
    its publish ``ahead``): what the store holds once the clock is set back by ``ahead``."""
    layout = Layout(var)
    pointer = json.loads(layout.current.read_text())
    at = datetime.fromisoformat(pointer["published_at"]) + ahead
    snapshot_id = at.strftime(ID_TIME) + "-abcdef"
    path = layout.snapshots / f"{snapshot_id}.duckdb"
    shutil.copyfile(layout.snapshots / pointer["file"], path)
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE source_snapshot SET fetched_at = fetched_at + ?", [ahead])
    run = {"id": snapshot_id, "started_at": at.isoformat(), "finished_at": at.isoformat(),
           "status": "published", "snapshot_id": snapshot_id, "message": "", "sources": []}
    (layout.runs / f"{snapshot_id}.json").write_text(json.dumps(run))
    layout.current.write_text(json.dumps({**pointer, "id": snapshot_id, "file": path.name,
                                          "published_at": at.isoformat()}))


def test_a_claim_edited_with_the_clock_set_back_keeps_time_in_order(tmp_path):
    """With the clock set back after a publish, editing a claim kept a claim_history version
    that ended before it started (valid_to the clock's now, valid_from the earlier fetch, 3
    days later), and stamped the new fetch before the old one, so the next refresh took the
    old as the latest and published identical files again. Times continue from the store's."""
    data = tmp_path / "data"
    shutil.copytree(REPO / "data", data)
    settings = make_settings(tmp_path, write_sources(tmp_path / "sources.toml",
                                                     curated=f'dir = "{data}"'))
    assert refresh(settings).status == "published"
    _as_written_ahead(tmp_path / "var", timedelta(days=3))
    claims = data / "claims.yaml"
    claims.write_text(claims.read_text().replace("    value: 30\n", "    value: 31\n", 1))
    assert refresh(settings).status == "published"
    with duckdb.connect(str(Layout(tmp_path / "var").read_current().path), read_only=True) as con:
        [(valid_from, valid_to)] = con.execute(
            "SELECT valid_from, valid_to FROM claim_history").fetchall()
        [(old, new)] = con.execute(
            "SELECT min(fetched_at), max(fetched_at) FROM source_snapshot WHERE source = "
            "'curated' AND label = 'claims.yaml'").fetchall()
        latest_sha = con.execute(
            "SELECT sha256 FROM source_snapshot WHERE source = 'curated' AND label = "
            "'claims.yaml' ORDER BY fetched_at DESC LIMIT 1").fetchone()[0]
    assert valid_to >= valid_from
    assert new > old and latest_sha == hashlib.sha256(claims.read_bytes()).hexdigest()
    assert refresh(settings).status == "unchanged"  # the same files: nothing to publish
