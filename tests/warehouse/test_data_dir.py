"""The data directory is a boundary: CURRENT, snapshot, state and quarantine paths that lead out
of it (an absolute path, ``..``, a symlink) are refused, never served or touched, and messages
name paths relative to it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ingest.refresh import refresh
from tests.conftest import make_settings, publish_small, write_sources
from warehouse.exceptions import SnapshotError
from warehouse.storage.store import Layout

FIRST = "20261201T000000000000Z-aaaaaa"


@pytest.fixture
def planted(data_dir, tmp_path) -> Path:
    """A valid snapshot outside the data directory (an attacker's), labelled 'planted'."""
    elsewhere = Layout(tmp_path / "elsewhere")
    elsewhere.ensure()
    return publish_small(elsewhere, "20991231T000000000000Z-ffffff", label="planted")


def _point(data_dir: Path, file: str, snapshot_id: str = "20991231T000000000000Z-ffffff") -> None:
    (data_dir / "CURRENT").write_text(json.dumps(
        {"id": snapshot_id, "file": file, "published_at": "2026-12-01T00:00:00+00:00"}))


def _absolute(data_dir, planted):
    _point(data_dir, str(planted))


def _dotdot(data_dir, planted):
    _point(data_dir, f"../../{planted.parent.parent.name}/snapshots/{planted.name}")


def _symlinked_dir(data_dir, planted):
    (data_dir / "snapshots" / "link").symlink_to(planted.parent)
    _point(data_dir, f"link/{planted.name}")


def _symlinked_file(data_dir, planted):
    (data_dir / "snapshots" / planted.name).symlink_to(planted)
    _point(data_dir, planted.name)


def _symlinked_current(data_dir, planted):
    outside = planted.parent.parent / "CURRENT"
    (data_dir / "CURRENT").unlink()
    (data_dir / "CURRENT").symlink_to(outside)


PLANTS = [_absolute, _dotdot, _symlinked_dir, _symlinked_file, _symlinked_current]


@pytest.mark.parametrize("plant", PLANTS, ids=[p.__name__.strip("_") for p in PLANTS])
def test_a_current_leading_outside_is_refused_by_name_not_path(data_dir, planted, plant):
    plant(data_dir, planted)
    with pytest.raises(SnapshotError) as e:
        Layout(data_dir).read_current()
    assert "CURRENT" in e.value.message and str(data_dir.parent) not in e.value.message


@pytest.mark.parametrize("plant", PLANTS, ids=[p.__name__.strip("_") for p in PLANTS])
def test_the_api_never_serves_a_planted_snapshot(data_dir, planted, plant, client_for, tmp_path):
    plant(data_dir, planted)
    client = client_for(make_settings(tmp_path, write_sources(tmp_path / "s.toml")))
    r = client.get("/v1/sources")
    assert r.status_code == 503 and "planted" not in r.text
    assert str(tmp_path) not in r.text and "CURRENT" in r.json()["error"]["message"]
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 503


@pytest.mark.parametrize("plant", PLANTS, ids=[p.__name__.strip("_") for p in PLANTS])
def test_recovery_moves_nothing_from_outside_and_repoints_inside(data_dir, planted, plant,
                                                                 tmp_path):
    outside = sorted(p for p in planted.parent.parent.rglob("*"))
    plant(data_dir, planted)
    report = refresh(make_settings(tmp_path, write_sources(tmp_path / "s.toml")))
    assert planted.exists() and sorted(planted.parent.parent.rglob("*")) == outside
    assert Layout(data_dir).read_current().id == FIRST  # the newest snapshot inside
    assert any("CURRENT is refused" in n for n in report.notes), report.notes
    assert not any(str(tmp_path) in n for n in report.notes)


@pytest.mark.parametrize("name", ["quarantine", "state", "runs", "snapshots", "raw"])
def test_a_layout_directory_symlinked_outside_stops_the_refresh(data_dir, tmp_path, name):
    target = tmp_path / "outside"
    target.mkdir()
    if (data_dir / name).exists():
        shutil.rmtree(data_dir / name)
    (data_dir / name).symlink_to(target)
    with pytest.raises(SnapshotError, match=f"^{name} leads outside the data directory"):
        refresh(make_settings(tmp_path, write_sources(tmp_path / "s.toml")))
    assert list(target.iterdir()) == []


def test_a_raw_name_that_is_not_a_sha256_is_refused(tmp_path):
    layout = Layout(tmp_path / "var")
    with pytest.raises(SnapshotError, match="not a sha256"):
        layout.raw_path("../../etc/passwd")
