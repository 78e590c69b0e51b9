"""Trust under faults: no secret leaks on any path, a trickling server cannot hold a refresh, a
lost rule is refused by name, a full disk is a recorded one-line failure, and the operator
signals (exit codes, JSON log lines, missing sources file, interrupted runs) work."""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import string
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.refresh import refresh
from tests.conftest import full_sources, make_settings, mount_azure, write_sources
from tests.helpers import RULES_ADOC, Reply
from warehouse.exceptions import ConfigError
from warehouse.redact import redact, redact_text, secret_name
from warehouse.settings import Settings
from warehouse.storage.store import Layout, RefreshLock

BIN = Path(sys.executable).parent
CSV = (b"Organization,Availability,Division,SystemName,Platform,Model,Scenario,Result,Units,"
       b"version\n"
       b"Acme,available,closed,Box,box,llama2-70b-99,Offline,10.5,Tokens/s,v9.9\n"
       b"Acme,available,closed,Box,box,llama2-70b-99,Server,8.5,Tokens/s,v9.9\n")

# --------------------------------------------------------------------------- redaction

SECRET_NAMES = st.one_of(
    st.sampled_from(["sig", "se", "sp", "X-Amz-Signature", "X-Amz-Credential",
                     "X-Amz-Security-Token", "X-Goog-Signature", "client_secret", "api_key",
                     "apiKey", "auth", "authorization", "access_token", "code", "session",
                     "sessionId", "password", "refresh_token", "SAS_TOKEN"]),
    st.from_regex(r"[a-z]{0,4}(token|secret|key|password)[a-z0-9_]{0,4}", fullmatch=True))
SECRET_VALUES = st.text(alphabet=string.ascii_letters + string.digits, min_size=10,
                        max_size=24).map(lambda s: "Zq" + s)  # never a word in any message


@given(name=SECRET_NAMES, value=SECRET_VALUES)
def test_the_recogniser_masks_every_secret_looking_parameter(name, value):
    url = f"https://user:{value}@host.example/p/file.csv?v=1&{name}={value}&currencyCode=USD"
    shown = redact(url)
    assert value not in shown and secret_name(name)
    assert shown.startswith("https://host.example/p/file.csv?v=1&") and "currencyCode=USD" in shown
    assert value not in redact_text(f"failed: GET {url} (redirected to {url}#x)")


def everything_written(data_dir: Path) -> bytes:
    """Every byte under the data directory except the raw store (the bodies as fetched, which
    the test's server never makes carry the secret)."""
    return b"\n".join(p.read_bytes() for p in data_dir.rglob("*")
                      if p.is_file() and "raw" not in p.relative_to(data_dir).parts)


def snapshots_text(data_dir: Path) -> str:
    out = []
    for path in (data_dir / "snapshots").glob("*.duckdb"):
        con = duckdb.connect()  # attached: the API in this process has the file open already
        con.execute("ATTACH ? AS s (READ_ONLY)", [str(path)])
        con.execute("USE s")
        out.append(json.dumps(con.execute("SELECT * FROM refresh_run").fetchall(), default=str))
        out.append(json.dumps(con.execute("SELECT url FROM source_snapshot").fetchall()))
        out.append(json.dumps(con.execute("SELECT * FROM mlperf_result").fetchall(), default=str))
        con.close()
    return "\n".join(out)


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(name=SECRET_NAMES, value=SECRET_VALUES)
def test_no_secret_leaks_on_success_or_any_failure_path(tmp_path_factory, session_server,
                                                        client_for, name, value):
    server = session_server
    server.reset()
    tmp = tmp_path_factory.mktemp("secret")
    query = f"?{name}={value}&v=1"
    url = server.url("/r.csv") + query
    settings_ = make_settings(tmp, write_sources(
        tmp / "sources.toml", mlperf=f'rounds = {{ "v9.9" = "{url}" }}'), http_retries=0)
    outputs: list[str] = []

    def run() -> None:
        report = refresh(settings_)
        outputs.extend(report.summary_lines())
        outputs.append(json.dumps(report.as_dict(), default=str))

    server.scripts["/r.csv"].append(Reply(500, b"down"))                 # fetch fails
    run()
    closed = f"http://user:{value}@127.0.0.1:9/r.csv{query}"              # nothing listens
    settings_ = make_settings(tmp, write_sources(
        tmp / "sources.toml", mlperf=f'rounds = {{ "v9.9" = "{closed}" }}'), http_retries=0)
    run()
    settings_ = make_settings(tmp, write_sources(
        tmp / "sources.toml", mlperf=f'rounds = {{ "v9.9" = "{url}" }}'), http_retries=0)
    server.scripts["/r.csv"].append(Reply(200, b"<html>" + url.encode() + b"</html>"))
    run()                                                                   # parse fails
    server.scripts["/start"].append(Reply(302, b"", {"Location": "/r.csv" + query}))
    server.scripts["/r.csv"].append(Reply(200, b"not, a summary\n"))
    settings_ = make_settings(tmp, write_sources(
        tmp / "sources.toml", mlperf=f'rounds = {{ "v9.9" = "{server.url("/start")}" }}'),
        http_retries=0)
    run()                                                                   # after a redirect
    settings_ = make_settings(tmp, write_sources(
        tmp / "sources.toml", mlperf=f'rounds = {{ "v9.9" = "{url}" }}'), http_retries=0)
    server.files["/r.csv"] = CSV
    run()                                                                   # success
    assert Layout(settings_.data_path).read_current() is not None
    client = client_for(settings_)
    run_id = Layout(settings_.data_path).read_runs()[0]["id"]
    source_id = client.get("/v1/sources").json()["rows"][0]["id"]
    result_id = client.get("/v1/results").json()["rows"][0]["id"]
    routes = [p.format(run_id=run_id, snapshot_id=source_id, result_id=result_id,
                       claim_id="none", accelerator_id="nvidia-h200")
              for p in client.get("/openapi.json").json()["paths"]]
    assert len(routes) > 30
    for route in [*routes, "/v1/results?format=csv", "/v1/sources?format=ndjson"]:
        outputs.append(client.get(route).text)  # every route (a 422 answer counts too)
    outputs.append(snapshots_text(settings_.data_path))
    assert not [o for o in outputs if value in o]
    assert value.encode() not in everything_written(settings_.data_path)
    server.reset()


def test_the_command_line_leaks_nothing_either(tmp_path, server):
    secret = "Zq9SECRETfromTheCLItest"
    server.scripts["/r.csv"].append(Reply(200, b"<html>oops</html>"))
    url = server.url("/r.csv") + f"?X-Amz-Signature={secret}&sp=r"
    sources = write_sources(tmp_path / "sources.toml", mlperf=f'rounds = {{ "v9.9" = "{url}" }}')
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_SOURCES": str(sources), "PERFLEDGER_HTTP_RETRIES": "0"}
    for extra in ([], ["--log-json"]):
        done = subprocess.run([BIN / "perfledger", "refresh", "--report",
                               str(tmp_path / "report.json"), *extra], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1
        assert secret not in done.stdout + done.stderr
        assert secret not in (tmp_path / "report.json").read_text()
        assert "X-Amz-Signature=***&sp=***" in (tmp_path / "report.json").read_text()


# --------------------------------------------------------------------------- deadlines


class TrickleServer:
    """Sends headers promising 10,000 bytes, then one byte every 0.1 s: a fetch that never
    times out on a read."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.trickle, args=(conn,), daemon=True).start()

    def trickle(self, conn: socket.socket) -> None:
        try:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n")
            while not self.stop.is_set():
                conn.sendall(b"x")
                time.sleep(0.1)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def test_a_trickling_server_cannot_hold_a_refresh(tmp_path):
    trickle = TrickleServer()
    try:
        sources = write_sources(
            tmp_path / "sources.toml",
            mlperf=f'rounds = {{ "v9.9" = "http://127.0.0.1:{trickle.port}/summary.csv" }}',
            mlperf_rules=f'url = "{RULES_ADOC}"')
        settings_ = make_settings(tmp_path, sources, http_deadline=1.5)
        started = time.monotonic()
        report = refresh(settings_)
        took = time.monotonic() - started
    finally:
        trickle.close()
    mlperf, rules = report.sources
    assert mlperf.status == "failed"
    assert re.search(r"deadline exceeded after [12] s", mlperf.message), mlperf.message
    assert rules.status == "updated" and report.status == "partial"  # the others went on
    assert took < 30


def test_a_refresh_deadline_ends_every_source_still_fetching(tmp_path, server):
    server.handlers["/slow.csv"] = lambda req: (time.sleep(1.0), Reply(200, CSV))[1]
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf=f'rounds = {{ "v9.9" = "{server.url("/slow.csv")}" }}')
    report = refresh(make_settings(tmp_path, sources, refresh_deadline=0.3))
    [mlperf] = report.sources
    assert mlperf.status == "failed" and "deadline exceeded" in mlperf.message


# --------------------------------------------------------------------------- rules


def rules_without(model: str) -> str:
    lines = RULES_ADOC.read_text().splitlines(keepends=True)
    return "".join(line for line in lines if not (line.startswith("|") and f"|{model} " in line))


def test_a_model_that_loses_its_limits_is_refused_by_name(tmp_path, server, client_for):
    server.files["/rules.adoc"] = RULES_ADOC.read_bytes()
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf_rules=f'url = "{server.url("/rules.adoc")}"')
    settings_ = make_settings(tmp_path, sources)
    assert refresh(settings_).status == "published"
    server.files["/rules.adoc"] = rules_without("Llama2-70b").encode()
    report = refresh(settings_)
    assert report.status == "failed" and report.exit_code == 1
    assert "latency limits: 2 entries the last good refresh had are missing: " \
           "llama2-70b Interactive, llama2-70b Server" in report.message
    rows = client_for(settings_).get("/v1/rules?model=llama2-70b").json()["rows"]
    assert {r["scenario"] for r in rows} == {"Server", "Interactive"}
    assert refresh(settings_, accept_shrink=True).status == "published"
    rows = client_for(settings_).get("/v1/rules?model=llama2-70b").json()["rows"]
    assert rows == []


# --------------------------------------------------------------------------- disk and I/O


def test_a_full_disk_is_a_recorded_one_line_failure(tmp_path, server, monkeypatch):
    import ingest.refresh as pipeline

    server.files["/r.csv"] = CSV
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf=f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}')
    settings_ = make_settings(tmp_path, sources)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "/data/snapshots/x.duckdb")

    monkeypatch.setattr(Layout, "publish", full)
    report = refresh(settings_)
    assert report.status == "failed" and "\n" not in report.message
    assert report.message.startswith("disk full writing /data/snapshots/x.duckdb")
    layout = Layout(settings_.data_path)
    assert layout.read_current() is None and layout.read_runs()[0]["message"] == report.message
    assert not list(layout.snapshots.glob("*.partial"))
    monkeypatch.undo()

    def io_error(*args, **kwargs):
        raise duckdb.IOException("IO Error: Could not write file \"x\": No space left on device")

    monkeypatch.setattr(pipeline, "_record_run", io_error)
    report = refresh(settings_)
    assert report.status == "failed" and report.message.startswith("disk full")


def test_a_disk_that_fills_mid_commit_is_named_not_hidden_by_the_rollback(tmp_path, server,
                                                                        monkeypatch):
    """DuckDB's commit fails on ENOSPC and the rollback after it fails too ("cannot rollback"):
    the run names the full disk, not the rollback."""
    from warehouse.storage.staging import Staging

    server.files["/r.csv"] = CSV
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf=f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}')
    settings_ = make_settings(tmp_path, sources)

    def commit(self):
        raise duckdb.IOException('IO Error: Could not write file "x.duckdb.partial.wal": '
                                 "No space left on device")

    def rollback(self):
        raise duckdb.TransactionException("TransactionContext Error: cannot rollback - no "
                                          "transaction is active")

    monkeypatch.setattr(Staging, "commit", commit)
    monkeypatch.setattr(Staging, "rollback", rollback)
    report = refresh(settings_)
    assert report.status == "failed" and report.message.startswith("disk full")
    assert "No space left on device" in report.message and "cannot rollback" not in report.message
    assert Layout(settings_.data_path).read_runs()[0]["message"] == report.message
    assert Layout(settings_.data_path).read_current() is None


def test_a_refresh_out_of_memory_is_a_named_failure_not_a_traceback(tmp_path, server):
    """DuckDB refusing an allocation under a refresh's memory limit recorded a failed run and
    then raised (derive at 100x data under 128 MiB), so `perfledger refresh` printed a traceback
    and wrote no --report; while loading, it failed the source as if its data were bad. Either
    is now a failed run, in one line, naming the last stage and the setting that bounds it; nothing
    is published and the staged file is gone."""
    server.files["/r.csv"] = CSV
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf=f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}')
    # below the 64 MiB the setting accepts, so that DuckDB itself runs out on this small file
    settings_ = make_settings(tmp_path, sources).model_copy(update={"refresh_memory_mb": 1})
    report = refresh(settings_)
    assert report.status == "failed" and "\n" not in report.message, report.as_dict()
    assert report.message.startswith("out of memory (last stage: stage)"), report.message
    assert "may use 1 MB (PERFLEDGER_REFRESH_MEMORY_MB; raise it): Out of Memory Error: " \
        "failed to allocate" in report.message  # DuckDB's own words, without its SET advice
    assert "SET memory_limit" not in report.message
    summary = "\n".join(report.summary_lines())
    assert "MLPerf could not be reached" not in summary  # the run stopped, not the source
    assert summary.splitlines()[-1].startswith(f"refresh {report.id}: failed — out of memory")
    layout = Layout(settings_.data_path)
    assert layout.read_current() is None and layout.read_runs()[0]["message"] == report.message
    assert not [p for p in layout.snapshots.iterdir() if p.name != "tmp"]


@pytest.mark.parametrize("free_after", [0, 2, 4])
def test_a_run_journal_write_on_a_full_disk_is_a_reported_failure(tmp_path, server, monkeypatch,
                                                                  free_after):
    """With no space left the run record cannot be written — at the start (0 writes succeed)
    or mid-run: the refresh still returns a failed report naming ENOSPC and the file, never a
    traceback, and publishes nothing."""
    import warehouse.storage.store as store

    server.files["/r.csv"] = CSV
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf=f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}')
    settings_ = make_settings(tmp_path, sources)
    real = store.atomic_write
    writes = []

    def filling(path, data, sync_dir=True):
        if path.parent.name == "runs":
            writes.append(path)
            if len(writes) > free_after:
                raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data, sync_dir)

    monkeypatch.setattr(store, "atomic_write", filling)
    report = refresh(settings_)
    assert report.status == "failed" and "\n" not in report.message
    assert report.message.startswith(f"disk full writing runs/{report.id}.json"), report.message
    assert any(n.startswith("the run record could not be written: disk full") for n in report.notes)
    assert report.summary_lines()[-1].startswith(f"refresh {report.id}: failed — disk full")
    assert Layout(settings_.data_path).read_current() is None


# --------------------------------------------------------------------------- operator signals


def test_exit_codes_and_json_log_lines(tmp_path, server):
    server.files["/r.csv"] = CSV
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf=f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}')
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_SOURCES": str(sources)}
    done = subprocess.run([BIN / "perfledger", "refresh", "--log-json"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert all(set(line) >= {"time", "level", "event", "source", "status", "rows", "seconds",
                             "message"} for line in lines)
    summary = [line for line in lines if line["event"] == "summary"]
    assert summary[0]["source"] == "mlperf" and summary[0]["rows"] == 2
    assert summary[-1]["status"] == "published" and summary[-1]["seconds"] > 0
    assert done.stdout == ""

    layout = Layout(tmp_path / "var")
    with RefreshLock(layout):  # another refresh holds the lock: busy, not broken
        busy = subprocess.run([BIN / "perfledger", "refresh", "--log-json"], env=env,
                              capture_output=True, text=True, timeout=120)
        plain = subprocess.run([BIN / "perfledger", "refresh"], env=env,
                               capture_output=True, text=True, timeout=120)
    assert busy.returncode == plain.returncode == 75
    [locked] = [json.loads(line) for line in busy.stderr.splitlines()]
    assert locked["event"] == "locked" and locked["level"] == "error"
    assert locked["status"] == "busy" and "refresh already running" in locked["message"]
    assert plain.stderr.startswith("RefreshLocked: refresh already running")


def test_a_set_but_missing_sources_file_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match=f"the sources file {missing}"):
        refresh(Settings(data_dir=tmp_path / "var", sources=missing))
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_SOURCES": str(missing)}
    done = subprocess.run([BIN / "perfledger", "refresh"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and str(missing) in done.stderr
    assert not Layout(tmp_path / "var").read_runs()  # nothing was fetched from the internet


def test_curated_is_unchanged_and_messages_name_the_source_once(tmp_path, server):
    sources = full_sources(tmp_path / "sources.toml", server)
    mount_azure(server, page_size=4)
    settings_ = make_settings(tmp_path, sources)
    assert refresh(settings_).status == "published"
    server.handlers.clear()  # the Azure API goes away
    report = refresh(settings_)
    curated = next(s for s in report.sources if s.source == "curated")
    assert curated.status == "unchanged"
    line = next(x for x in report.summary_lines() if x.startswith("azure_prices:"))
    assert line.count("azure_prices") == 1, line
    assert report.message.count("azure_prices") == 1, report.message


def test_a_yaml_error_stays_on_one_line_of_the_summary(tmp_path):
    data = tmp_path / "data"
    import shutil

    from tests.helpers import REPO

    shutil.copytree(REPO / "data", data)
    (data / "claims.yaml").write_text("claims:\n  - id: x\n    value: [1,\n  oops: {\n")
    sources = write_sources(tmp_path / "sources.toml", curated=f'dir = "{data}"')
    report = refresh(make_settings(tmp_path, sources))
    [curated] = report.sources
    assert curated.status == "failed" and "not valid YAML" in curated.message
    assert all("\n" not in line for line in report.summary_lines())


def test_a_duplicate_azure_item_with_another_price_is_a_warning_naming_both(tmp_path, server):
    from tests.azure_emulator import seed_items

    items = seed_items()
    twin = dict(items[0], retailPrice=items[0]["retailPrice"] * 2,
                unitPrice=items[0]["unitPrice"] * 2)
    mount_azure(server, [*items, twin], page_size=4)
    sources = write_sources(tmp_path / "sources.toml",
                            azure_prices=f'url = "{server.url("/api/retail/prices")}"')
    report = refresh(make_settings(tmp_path, sources))
    [azure] = report.sources
    [warning] = [w for w in azure.warnings if "listed 2 times with different prices" in w]
    assert items[0]["armSkuName"] in warning and str(items[0]["retailPrice"]) in warning
    assert str(twin["retailPrice"]) in warning and "the first was kept" in warning


def test_the_azure_walk_reports_pages_against_the_last_count(tmp_path, server):
    mount_azure(server, page_size=4)
    sources = write_sources(tmp_path / "sources.toml",
                            azure_prices=f'url = "{server.url("/api/retail/prices")}"')
    settings_ = make_settings(tmp_path, sources)
    first: list[str] = []
    refresh(settings_, on_event=lambda kind, text: first.append(text) if kind == "progress" else 0)
    assert first[0] == "azure_prices: page 1" and len(first) > 1
    second: list[str] = []
    refresh(settings_, on_event=lambda kind, text: second.append(text) if kind == "progress" else 0)
    assert second[-1] == f"azure_prices: page {len(first)} of about {len(first)} (last refresh)"
