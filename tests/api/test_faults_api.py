"""The API under faults: the response cache never answers one query with another, links never
come from the Host header, extreme dates are a 422, health says degraded and readiness says
whether anything can be served, validate runs while the API serves, serve stops on SIGTERM
with a stalled client, and the deploy examples pass systemd's own checks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ingest.refresh import refresh
from tests.conftest import full_sources, make_settings
from tests.helpers import REPO, free_port

BIN = Path(sys.executable).parent


def test_parameter_order_is_part_of_the_key(full_client):
    a = full_client.get("/v1/results?sort=organization&sort=-result&limit=5")
    b = full_client.get("/v1/results?sort=-result&sort=organization&limit=5")
    assert a.headers["etag"] != b.headers["etag"]
    assert [r["id"] for r in a.json()["rows"]] != [r["id"] for r in b.json()["rows"]]
    again = full_client.get("/v1/results?sort=-result&sort=organization&limit=5")
    assert again.content == b.content  # and each is served from its own cache entry
    c1 = full_client.get("/v1/results?columns=id&columns=round&limit=1&format=csv")
    c2 = full_client.get("/v1/results?columns=round&columns=id&limit=1&format=csv")
    assert c1.text.splitlines()[0] == "id,round" and c2.text.splitlines()[0] == "round,id"


def test_links_never_come_from_the_host_header(full_copy, client_for):
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_public_url="https://perf.example.com/"))
    evil = client.get("/v1/results?limit=2", headers={"Host": "evil.example"}).json()
    plain = client.get("/v1/results?limit=2").json()
    assert evil["next"] == plain["next"] == "https://perf.example.com/v1/results?offset=2&limit=2"
    default = client_for(make_settings(tmp, sources)).get(
        "/v1/results?limit=2", headers={"Host": "evil.example"}).json()
    assert default["next"].startswith("http://127.0.0.1:8000/v1/results?")


@pytest.mark.parametrize("path", ["/v1/results", "/v1/claims", "/v1/costs", "/v1/prices"])
@pytest.mark.parametrize("moment", ["9999-12-31", "0001-01-01", "1900-01-01",
                                    "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00"])
def test_extreme_dates_are_a_422_naming_the_range(full_client, path, moment):
    r = full_client.get(path, params={"as_of": moment})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["param"] == "as_of" and "from 1970-01-01 to 9999-12-30" in error["message"]


def test_the_schemas_as_of_pattern_matches_every_value_the_server_answers(full_client):
    """A client checking ``as_of`` against the OpenAPI pattern before sending it never refuses
    a value the server answers (every day of a leap and a common year, the range's ends, times
    and offsets); what the pattern refuses, the server refuses too."""
    import re
    from datetime import date, timedelta

    from api.routes.common import parse_as_of
    from warehouse.exceptions import QueryError

    def answered(value: str) -> bool:
        try:
            return parse_as_of(value) is not None
        except QueryError:
            return False

    doc = full_client.get("/openapi.json").json()
    patterns = {s["pattern"] for op in doc["paths"].values() for m in op.values()
                for p in m.get("parameters", []) if p["name"] == "as_of"
                for s in p["schema"].get("anyOf", [p["schema"]]) if "pattern" in s}
    assert len(patterns) == 1
    pattern = re.compile(patterns.pop())
    days = [(date(2023, 1, 1) + timedelta(days=n)).isoformat() for n in range(731)]
    values = [*days, "2023-02-29", "2024-02-30", "2024-04-31", "1970-01-01", "1969-12-31",
              "9999-12-30", "9999-12-31", "2024-02-29T23:59:59.5+05:30", "2024-02-29 00:00Z",
              "2024-02-29T24:00", "2024-2-29", "20240229"]
    assert answered("2024-02-29") and not answered("2023-02-29")
    for value in values:
        if answered(value):
            assert pattern.fullmatch(value), value
        if not pattern.fullmatch(value):
            assert not answered(value), value


def test_health_degraded_and_readiness(full_copy, client_for, tmp_path):
    tmp, _ = full_copy
    client = client_for(make_settings(tmp, full_copy[1]))
    assert client.get("/healthz").json()["status"] == "ok"
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    broken = full_sources(tmp / "broken.toml", mlperf_rules='url = "http://127.0.0.1:9/x.adoc"')
    settings = make_settings(tmp, broken, http_retries=0)
    assert refresh(settings).status == "failed"
    health = client_for(settings).get("/healthz").json()
    assert health["status"] == "degraded"
    assert next(s for s in health["sources"] if s["source"] == "mlperf_rules")["stale"]
    assert client_for(settings).get("/readyz").status_code == 200  # still serving
    empty = client_for(make_settings(tmp_path / "fresh", broken))
    assert empty.get("/healthz").json()["status"] == "empty"
    not_ready = empty.get("/readyz")
    assert not_ready.status_code == 503 and not_ready.json()["reason"] == "no snapshot published yet"
    for path in ("/v1/results", "/v1/ratios", "/v1/costs"):  # lists say why they are empty
        body = empty.get(path).json()
        assert body["total"] == 0 and "no snapshot is published yet" in body["hint"]
    # a calculator asked for warehouse inputs says there are none, not "known: " and nothing
    for path, param in (("/v1/calc/ridge?hardware=nvidia-h100-sxm", "hardware"),
                        ("/v1/calc/decode-bound?model=illustrative-100b&bandwidth=1e12", "model")):
        error = empty.get(path).json()["error"]
        assert error["param"] == param and error["message"].endswith(
            "the snapshot served has none (nothing published yet, or the curated source did "
            "not load: see /healthz)"), error


def test_validate_runs_while_the_api_serves(full_copy, client_for):
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources))
    assert client.get("/v1/results?limit=1").status_code == 200  # the API holds the file open
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp / "var"),
           "PERFLEDGER_SOURCES": str(sources)}
    done = subprocess.run([BIN / "perfledger", "validate"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Could not set lock" not in done.stdout + done.stderr
    assert "every mlperf_result row is measured" in done.stdout
    assert client.get("/v1/results?limit=1").status_code == 200


def test_serve_stops_on_sigterm_with_a_stalled_client(tmp_path):
    port = free_port()
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_API_SHUTDOWN_TIMEOUT": "2", "PERFLEDGER_API_ACCESS_LOG": "false"}
    proc = subprocess.Popen([BIN / "perfledger", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                idle = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.2)
        idle.settimeout(60)  # a first request on a loaded machine may take a while
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # then kept alive, idle
        assert b"200 OK" in idle.recv(65536)
        stalled = socket.create_connection(("127.0.0.1", port), timeout=1)
        stalled.sendall(b"GET /v1/results HTTP/1.1\r\nHost: x\r\n")  # never finished
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)  # raises if the stalled client kept it alive past the timeout
        assert proc.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after closing
        idle.close()
        stalled.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_systemd_units_verify_and_the_api_unit_is_hardened(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed on this machine")
    for unit in ("perfledger-api.service", "perfledger-refresh.service",
                 "perfledger-refresh.timer"):
        text = (REPO / "deploy" / unit).read_text()
        # the units name /srv/perfledger's executable; verify against one that exists here
        (tmp_path / unit).write_text(text.replace("/srv/perfledger/.venv/bin/perfledger",
                                                  str(BIN / "perfledger")))
    done = subprocess.run([analyze, "verify", "--man=no", *(str(tmp_path / u) for u in (
        "perfledger-api.service", "perfledger-refresh.service", "perfledger-refresh.timer"))],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    security = subprocess.run([analyze, "security", "--offline=yes",
                               str(tmp_path / "perfledger-api.service")],
                              capture_output=True, text=True, timeout=60)
    score = float(security.stdout.split("Overall exposure level for")[1].split(":")[1].split()[0])
    assert score < 5, security.stdout[-500:]
    for unit in ("perfledger-api.service", "perfledger-refresh.service"):
        text = (REPO / "deploy" / unit).read_text()
        for line in ("User=perfledger", "ProtectSystem=strict", "NoNewPrivileges=yes",
                     "PrivateTmp=yes"):
            assert line in text, (unit, line)
    refresh_unit = (REPO / "deploy" / "perfledger-refresh.service").read_text()
    assert "ReadWritePaths=/srv/perfledger/var" in refresh_unit
    assert "TimeoutStartSec=" in refresh_unit and "SuccessExitStatus=75" in refresh_unit


def test_kubernetes_examples_bound_the_refresh_and_describe_the_api():
    [cron] = list(yaml.safe_load_all((REPO / "deploy" / "cronjob.yaml").read_text()))
    job = cron["spec"]["jobTemplate"]["spec"]
    pod = job["template"]["spec"]
    assert cron["spec"]["startingDeadlineSeconds"] > 0 and job["activeDeadlineSeconds"] > 0
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["containers"][0]["resources"]["limits"]["memory"]
    docs = {d["kind"]: d for d in yaml.safe_load_all((REPO / "deploy" / "api.yaml").read_text())}
    assert set(docs) == {"PersistentVolumeClaim", "Deployment", "Service"}
    assert docs["PersistentVolumeClaim"]["spec"]["accessModes"] == ["ReadWriteMany"]
    api = docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert api["volumeMounts"][0]["readOnly"] is True


def test_a_failed_refresh_is_seen_by_a_client_revalidating_health(full_copy, client_for):
    """/healthz and /v1/refreshes read the run journal, which a failed refresh changes without
    a new snapshot: their ETag is their body's, so the old one is not answered 304."""
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources))
    before = {url: client.get(url) for url in ("/healthz", "/v1/refreshes")}
    assert before["/healthz"].json()["status"] == "ok"
    broken = full_sources(tmp / "broken.toml", mlperf_rules='url = "http://127.0.0.1:9/x.adoc"')
    assert refresh(make_settings(tmp, broken, http_retries=0)).status == "failed"
    for url, old in before.items():
        again = client.get(url, headers={"if-none-match": old.headers["etag"]})
        assert again.status_code == 200 and again.headers["etag"] != old.headers["etag"], url
        assert "last-modified" not in again.headers
    assert client.get("/healthz").json()["status"] == "degraded"
    assert client.get("/v1/refreshes").json()["total"] == before["/v1/refreshes"].json()["total"] + 1


def test_a_server_process_freezes_the_program_and_collects_what_snapshots_make(tmp_path):
    """`perfledger serve` builds its app with ``create_served_app``: the objects alive once
    the app is built (the program's own) are frozen, so a full garbage collection under load
    walks fewer than half as many objects; a snapshot opened afterwards (and what its
    requests make) is still collected, not frozen with them. In a process of its own: a
    freeze in the test worker would keep every later test's cycles."""
    script = """
import gc, json
from api.app import create_app, create_served_app
create_app()
gc.collect()
before = len(gc.get_objects())
app = create_served_app()
frozen = gc.get_freeze_count()
opened = app.state.reader.get()
print(json.dumps({"before": before, "frozen": frozen, "left": len(gc.get_objects()),
                  "snapshot_collected": gc.is_tracked(opened) and any(
                      o is opened for o in gc.get_objects())}))
"""
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["frozen"] >= found["before"] > 2 * found["left"]
    assert found["snapshot_collected"] is True


@pytest.mark.parametrize("args,factory", [([], "api.app:create_served_app"),
                                          (["--refresh-every", "1h"], "api.app:create_app")])
def test_serve_freezes_only_when_no_refresh_runs_in_its_process(tmp_path, monkeypatch, args,
                                                                 factory):
    """`serve --refresh-every` starts its first refresh before uvicorn builds the app in the
    same process: a freeze then would keep that refresh's objects for good, so it is not
    asked for there."""
    import uvicorn
    from typer.testing import CliRunner

    import ingest.scheduler
    from cli.main import app

    asked: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda target, **kw: asked.update(target=target, **kw))
    monkeypatch.setattr(ingest.scheduler, "start_background_refresh", lambda *a, **k: None)
    for name in ("SOURCES", "API_HOST", "API_PORT"):  # serve sets them: restored after
        monkeypatch.setenv(f"PERFLEDGER_{name}", os.environ.get(f"PERFLEDGER_{name}", ""))
        if not os.environ[f"PERFLEDGER_{name}"]:
            monkeypatch.delenv(f"PERFLEDGER_{name}")
    monkeypatch.setenv("PERFLEDGER_DATA_DIR", str(tmp_path / "var"))
    done = CliRunner().invoke(app, ["serve", "--port", "1", *args])
    assert done.exit_code == 0, done.output
    assert asked["target"] == factory and asked["factory"] is True


def test_routes_compute_at_most_api_threads_requests_at_once(full_copy, monkeypatch):
    """The server's routes run in at most ``api_threads`` threads: of 8 requests sent at
    once with api_threads 2, never more than 2 are computed together, and all are answered;
    the default is twice the cores the process may run on, at most 40."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from fastapi.testclient import TestClient

    import api.routes.results
    from api.app import create_app
    from warehouse.settings import Settings

    monkeypatch.delenv("PERFLEDGER_API_THREADS", raising=False)
    assert Settings().api_threads == min(2 * len(os.sched_getaffinity(0)), 40)
    running, peak, lock = [0], [0], threading.Lock()
    render = api.routes.results.render_list

    def counted(*args, **kwargs):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.05)  # long enough for the others to arrive meanwhile
            return render(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(api.routes.results, "render_list", counted)
    tmp, sources = full_copy
    settings = make_settings(tmp, sources, api_threads=2, api_warm=False,
                             api_response_cache_mb=0)
    with TestClient(create_app(settings)) as client:  # the lifespan sets the limit
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda i: client.get(f"/v1/results?limit={i + 1}"),
                                    range(8)))
        client.app.state.reader.close()
    assert [a.status_code for a in answers] == [200] * 8
    assert [len(a.json()["rows"]) for a in answers] == list(range(1, 9))
    assert peak[0] == 2
