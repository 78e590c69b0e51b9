"""Unattended refreshes: the lock, SIGKILL at every stage, per-source isolation, history,
retention, disk space. Real processes, a real local HTTP server, real files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from ingest.refresh import refresh
from ingest.scheduler import parse_interval, start_background_refresh
from tests.azure_emulator import seed_items
from tests.conftest import full_sources, make_settings, mount_azure, write_sources
from tests.helpers import REPO, SUMMARY_CSV, Reply, copy_data_dir
from warehouse.exceptions import ConfigError, SnapshotError
from warehouse.storage.store import Layout

BIN = Path(sys.executable).parent


@pytest.fixture
def http_copy(http_published, server, tmp_path):
    """A private copy of the warehouse published from /summary.csv, and the source bytes."""
    src, body = http_published
    copy_data_dir(src / "var", tmp_path / "var")
    server.files["/summary.csv"] = body
    return tmp_path, src / "sources.toml", body


def _env(tmp: Path, sources: Path, **extra: str) -> dict:
    return {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp / "var"),
            "PERFLEDGER_SOURCES": str(sources), **extra}


def _children(pid: int) -> list[int]:
    """The live children of ``pid``, read from /proc (Linux)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _freeze_grandchild(pid: int, timeout: float = 30.0) -> int:
    """Wait until the refresh's validation child runs (forked by its forkserver, a grandchild
    of ``pid``) and stop it there, so a kill lands while validation is in progress whatever
    the machine's speed; its pid."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for child in _children(pid):
            for grandchild in _children(child):
                os.kill(grandchild, signal.SIGSTOP)
                return grandchild
        time.sleep(0.005)
    raise AssertionError("the validation child never started")


def _slow(body: bytes, seconds: float):
    def handler(req):
        time.sleep(seconds)
        return Reply(200, body)
    return handler


def _changed(body: bytes) -> bytes:
    return body.replace(b'"240274.0"', b'"240999.0"')


def test_two_refreshes_at_once_one_runs_one_reports_the_lock(http_copy, server):
    tmp, sources, body = http_copy
    server.files.pop("/summary.csv")
    server.handlers["/summary.csv"] = _slow(_changed(body), 3)
    env = _env(tmp, sources)
    first = subprocess.Popen([BIN / "perfledger", "refresh"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not server.hits("/summary.csv") and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.run([BIN / "perfledger", "refresh"], env=env, capture_output=True,
                            text=True, timeout=60)
    out, _ = first.communicate(timeout=300)
    assert first.returncode == 0 and "published" in out
    assert second.returncode == 75  # busy, told apart from broken (1)
    assert second.stderr.startswith("RefreshLocked: refresh already running (pid ")
    assert "started 20" in second.stderr
    layout = Layout(tmp / "var")
    assert len(list(layout.snapshots.glob("*.duckdb"))) == 2  # the copied one + one new
    assert len(server.hits("/summary.csv")) == 1


def test_wait_option_waits_for_the_lock(http_copy, server):
    tmp, sources, body = http_copy
    server.files.pop("/summary.csv")
    server.handlers["/summary.csv"] = _slow(body, 2)
    env = _env(tmp, sources)
    first = subprocess.Popen([BIN / "perfledger", "refresh"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    while not server.hits("/summary.csv"):
        time.sleep(0.05)
    second = subprocess.run([BIN / "perfledger", "refresh", "--wait", "120"], env=env,
                            capture_output=True, text=True, timeout=300)
    first.wait(300)
    assert second.returncode == 0, second.stderr


class Poller(threading.Thread):
    """Reads the API over the data directory throughout, recording every failure."""

    def __init__(self, client) -> None:
        super().__init__(daemon=True)
        self.client, self.errors, self.reads = client, [], 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            r = self.client.get("/v1/results?limit=1&division=all&availability=all")
            if r.status_code != 200 or r.json()["total"] != 492:
                self.errors.append((r.status_code, r.text[:200]))
            self.reads += 1
            time.sleep(0.02)


@pytest.mark.parametrize("kill_on", ["source", "stage", "validate", "publish"])
def test_sigkill_at_any_stage_keeps_a_whole_snapshot_serving(http_copy, server, client_for,
                                                             kill_on):
    tmp, sources, body = http_copy
    server.files.pop("/summary.csv")
    server.handlers["/summary.csv"] = _slow(_changed(body), 2 if kill_on == "source" else 0)
    settings = make_settings(tmp, sources)
    before = Layout(settings.data_path).read_current()
    poller = Poller(client_for(settings))
    poller.start()
    proc = subprocess.Popen([BIN / "perfledger", "refresh", "--log-json"], env=_env(tmp, sources),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stderr:  # type: ignore[union-attr]
        event = json.loads(line)["event"]
        seen.append(event)
        if event == kill_on:
            frozen = _freeze_grandchild(proc.pid) if kill_on == "validate" else None
            proc.send_signal(signal.SIGKILL)
            if frozen is not None:  # the validation child, stopped mid-run, goes too
                os.kill(frozen, signal.SIGKILL)
            break
    proc.wait(60)
    assert proc.returncode == -signal.SIGKILL, seen
    time.sleep(0.3)
    poller.stop.set()
    poller.join(10)
    assert poller.errors == [] and poller.reads > 0
    after_kill = Layout(settings.data_path).read_current()
    assert after_kill is not None and after_kill.path.exists()
    assert after_kill == before or kill_on == "publish"

    report = refresh(settings)
    assert report.status in ("published", "unchanged"), report.message
    layout = Layout(settings.data_path)
    assert not list(layout.snapshots.glob("*.partial")) and not list(layout.root.rglob(".*.tmp"))
    if kill_on != "publish":  # the killed run is on record, with its pid and last stage
        [note] = report.notes
        assert f"pid {proc.pid}" in note and "was interrupted" in note
        assert f"last stage {kill_on}" in note or (kill_on == "source" and "last stage source" in note)
        killed = [r for r in layout.read_runs() if r["status"] == "interrupted"]
        assert len(killed) == 1 and killed[0]["pid"] == proc.pid
    assert client_for(settings).get("/v1/results?limit=1&division=all&availability=all").json()[
        "total"] == 492


def test_one_source_down_keeps_its_last_good_rows_marked_stale(full_copy, server, client_for):
    tmp, _ = full_copy
    changed = tmp / "summary.csv"
    changed.write_bytes(_changed(SUMMARY_CSV.read_bytes()))
    sources = full_sources(tmp / "sources.toml", server,
                           mlperf=f'rounds = {{ "v6.1" = "{changed}" }}',
                           mlperf_rules=f'url = "{server.url("/gone.adoc")}"')
    mount_azure(server, page_size=4)
    settings = make_settings(tmp, sources)
    rules_before = client_for(settings).get("/v1/rules").json()["rows"]

    report = refresh(settings)

    assert report.status == "partial" and report.exit_code == 1
    assert "mlperf_rules failed, kept its last good data" in report.message
    client = client_for(settings)
    assert client.get("/v1/results?model=deepseek-r1&min_result=240999&max_result=240999"
                      ).json()["total"] == 1
    assert client.get("/v1/rules").json()["rows"] == rules_before
    health = {s["source"]: s for s in client.get("/healthz").json()["sources"]}
    assert health["mlperf_rules"]["stale"] is True
    assert health["mlperf_rules"]["stale_since"] is not None
    assert "HTTP 404" in health["mlperf_rules"]["message"]
    assert health["mlperf"]["stale"] is False


def test_ten_refreshes_ten_price_versions_and_retention(tmp_path, server, client_for):
    sources = write_sources(tmp_path / "sources.toml",
                            azure_prices=f'url = "{server.url("/api/retail/prices")}"')
    settings = make_settings(tmp_path, sources, retention_count=3)
    items = seed_items()
    for i in range(10):
        items[0] = {**items[0], "retailPrice": 90.0 + i, "unitPrice": 90.0 + i,
                    "effectiveStartDate": f"2026-11-{i + 1:02d}T00:00:00Z"}
        mount_azure(server, items, page_size=4)
        report = refresh(settings)
        assert report.status == "published", (i, report.message)
    client = client_for(settings)
    history = client.get("/v1/prices/history", params={
        "sku": "Standard_ND96isr_H100_v5", "region": "eastus2", "offer": "on_demand",
        "os": "linux"}).json()["rows"]
    assert [h["retail_price"] for h in history] == [90.0 + i for i in range(10)]
    total = client.get("/v1/prices/history?sku=Standard_ND96isr_H100_v5&limit=1").json()["total"]
    others = len([x for x in items if x["armSkuName"] == "Standard_ND96isr_H100_v5"]) - 1
    assert total == 10 + others
    layout = Layout(settings.data_path)
    assert len(list(layout.snapshots.glob("*.duckdb"))) == 3
    assert layout.read_current().path.exists()


def test_edited_and_withdrawn_claims_are_kept(full_copy, client_for):
    tmp, _ = full_copy
    data = tmp / "data"
    shutil.copytree(REPO / "data", data)
    doc = yaml.safe_load((data / "claims.yaml").read_text())
    for c in doc["claims"]:
        if c["id"] == "cerebras-llama3.1-405b-969":
            c["value"] = 1000
    doc["claims"] = [c for c in doc["claims"] if c["id"] != "cerebras-llama3.1-8b-1800"]
    (data / "claims.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    settings = make_settings(tmp, full_sources(tmp / "sources.toml", curated=f'dir = "{data}"'))
    report = refresh(settings)
    assert report.status == "published", report.message
    client = client_for(settings)
    edited = client.get("/v1/claims/cerebras-llama3.1-405b-969").json()
    assert edited["row"]["value"] == 1000
    assert [(h["status"], h["value"]) for h in edited["history"]] == [("edited", 969.0)]
    withdrawn = client.get("/v1/claims/cerebras-llama3.1-8b-1800").json()
    assert withdrawn["withdrawn"] is True and withdrawn["row"] is None
    assert withdrawn["history"][0]["status"] == "withdrawn"
    assert withdrawn["history"][0]["claimed_on"] == "2024-08-27"


def test_not_enough_disk_fails_cleanly(http_copy):
    tmp, sources, _ = http_copy
    settings = make_settings(tmp, sources, min_free_mb=10**9)
    before = Layout(settings.data_path).read_current()
    with pytest.raises(SnapshotError, match="not enough free disk in .*MiB free, .*MiB needed"):
        refresh(settings)
    assert Layout(settings.data_path).read_current() == before
    assert Layout(settings.data_path).read_runs()[0]["status"] == "failed"


def test_retention_by_age_never_removes_current(http_copy):
    tmp, sources, _ = http_copy
    layout = Layout(tmp / "var")
    current = layout.read_current()
    old = layout.snapshots / "20200101T000000000000Z-aaaaaa.duckdb"
    old.write_bytes(b"")
    os.utime(old, (0, 0))
    os.utime(current.path, (0, 0))
    removed = layout.prune(keep=10, max_age_days=1)
    assert removed == [old] and current.path.exists()


def test_background_refresh_runs_while_serving_and_stops(http_copy, client_for):
    """The first background refresh runs at once while the API keeps answering; ``stop``
    ends the thread (no refresh is left running after the test)."""
    tmp, sources, _ = http_copy
    settings = make_settings(tmp, sources)
    runs_before = len(Layout(settings.data_path).read_runs())
    client = client_for(settings)
    job = start_background_refresh(settings, every=3600)
    try:
        deadline = time.monotonic() + 60
        while job.runs == 0 and time.monotonic() < deadline:
            assert client.get("/healthz").status_code == 200
            time.sleep(0.2)
        assert job.runs == 1
    finally:
        assert job.stop(timeout=30), "the background refresh thread did not stop"
    runs = Layout(settings.data_path).read_runs()
    assert len(runs) == runs_before + 1 and runs[0]["status"] == "unchanged"
    assert not job.thread.is_alive() and job.runs == 1  # no second run after stop


def test_refresh_interval_parsing():
    assert parse_interval("6h") == 21600 and parse_interval("30m") == 1800
    assert parse_interval("90s") == 90 and parse_interval("1d") == 86400
    for bad in ("5s", "6 hours", "", "-1h"):
        with pytest.raises(ConfigError):
            parse_interval(bad)


def test_cleanup_removes_duckdbs_spill_directory_of_a_killed_refresh(tmp_path):
    """A refresh killed while DuckDB was spilling past refresh_memory_mb leaves
    `<staging>.tmp/`; the next refresh removes it with the staging file."""
    layout = Layout(tmp_path / "var")
    layout.ensure()
    staging = layout.staging_path("killed")
    staging.write_bytes(b"half a database")
    spill = staging.with_name(staging.name + ".tmp")
    spill.mkdir()
    (spill / "duckdb_temp_storage-0.tmp").write_bytes(b"x" * 1024)
    removed = layout.clean_partials()
    assert staging in removed and spill in removed
    assert not staging.exists() and not spill.exists()
