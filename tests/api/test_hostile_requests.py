"""Hostile requests are bounded, refused or closed: huge lists of values, over-long query
strings, idle and half-sent connections (a real uvicorn), spreadsheet formulas in CSV, and
every response carries the security headers; health answers are never publicly cacheable."""

from __future__ import annotations

import csv
import io
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from api.middleware import MAX_QUERY_BYTES
from api.params import MAX_VALUES, VALUE_CAPS
from tests.helpers import free_port, wait_for_port

BIN = Path(sys.executable).parent


def test_three_thousand_rates_are_a_422_naming_the_cap(full_client):
    rates = ",".join(str(i) for i in range(1, 3001))
    r = full_client.get(f"/v1/costs?basis=assumed&rate={rates}")
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["param"] == "rate"
    assert f"at most {VALUE_CAPS['rate']} values" in error["message"] and "got 3000" in \
        error["message"]


def test_every_list_parameter_is_capped_and_repeats_collapse(full_client):
    many = "&".join(f"model=m{i}" for i in range(MAX_VALUES + 1))
    r = full_client.get(f"/v1/results?{many}")
    assert r.status_code == 422 and r.json()["error"]["param"] == "model"
    # the same value fifty-one times is one value: no 422, the same rows as once
    once = full_client.get("/v1/results?model=llama2-70b&limit=1000").json()
    repeated = full_client.get("/v1/results?" + "&".join(["model=llama2-70b"] * 51)
                               + "&model=llama2-70b,llama2-70b&limit=1000").json()
    assert once["total"] > 0 and repeated["total"] == once["total"]


def test_an_over_long_query_string_is_refused_before_routing(full_client):
    r = full_client.get("/v1/results?system=" + "x" * MAX_QUERY_BYTES)
    assert r.status_code == 414
    assert r.json()["error"]["code"] == "uri_too_long"
    assert r.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/v1/results?limit=1", "/healthz",
                                  "/v1/nosuch", "/v1/results?limt=1"])
def test_security_headers_on_every_response(full_client, path):
    r = full_client.get(path)
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert r.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert "script-src 'self'" in r.headers["content-security-policy"]


def test_the_docs_pages_keep_their_own_policy(full_client):
    r = full_client.get("/docs")
    assert "script-src 'self' 'unsafe-inline'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"


def test_gzip_refused_with_q0_gets_identity(full_client):
    url = "/v1/results?limit=200"
    assert full_client.get(url, headers={"Accept-Encoding": "gzip"}).headers[
        "content-encoding"] == "gzip"
    for refusal in ("gzip;q=0", "gzip; q=0.0, br", "identity, gzip;q=0"):
        r = full_client.get(url, headers={"Accept-Encoding": refusal})
        assert "content-encoding" not in r.headers, refusal
        assert r.json()["rows"]
    assert full_client.get(url, headers={"Accept-Encoding": "gzip;q=0.5"}).headers[
        "content-encoding"] == "gzip"


def test_health_and_readiness_are_never_publicly_cacheable(full_client):
    for path in ("/healthz", "/readyz"):
        r = full_client.get(path)
        assert r.headers["cache-control"] == "no-store", path


def _csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


HOSTILE = ['=HYPERLINK("http://evil.test","x")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)",
           "\tTAB", "\rCR"]


def test_csv_cells_that_would_run_as_formulas_are_escaped(full_copy, client_for, tmp_path):
    """A submitter-controlled text reaches CSV answers and exported CSV files with a leading
    apostrophe (numbers untouched); ``csv_raw=true`` / ``--csv-raw`` give the bytes as
    stored."""
    import duckdb

    from tests.conftest import make_settings

    tmp, sources = full_copy
    snapshot = next((tmp / "var" / "snapshots").glob("*.duckdb"))
    con = duckdb.connect(str(snapshot))  # a copy of the warehouse: plant hostile names
    ids = [r[0] for r in con.execute("SELECT id FROM mlperf_result ORDER BY id LIMIT 6").fetchall()]
    for rid, name in zip(ids, HOSTILE, strict=True):
        con.execute("UPDATE mlperf_result SET system_name = ? WHERE id = ?", [name, rid])
    con.close()
    client = client_for(make_settings(tmp, sources))
    query = "/v1/results?columns=id,system_name,result&limit=1000&format=csv"
    rows = {r["id"]: r for r in _csv_rows(client.get(query).text)}
    for rid, name in zip(ids, HOSTILE, strict=True):
        assert rows[rid]["system_name"] == "'" + name
        float(rows[rid]["result"])  # a number stays a number
    raw = {r["id"]: r for r in _csv_rows(client.get(query + "&csv_raw=true").text)}
    assert [raw[rid]["system_name"] for rid in ids] == HOSTILE
    plain = [r for r in rows.values() if r["id"] not in ids]
    assert plain and all(not r["system_name"].startswith("'") for r in plain)

    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp / "var"),
           "PERFLEDGER_SOURCES": str(sources)}
    for flag, expect in (([], lambda n: "'" + n), (["--csv-raw"], lambda n: n)):
        out = tmp_path / ("raw" if flag else "safe")
        subprocess.run([BIN / "perfledger", "export", "--out", str(out), "--format", "csv",
                        *flag], env=env, check=True, capture_output=True)
        with open(out / "mlperf_result.csv", newline="") as f:  # keep a CR inside a cell
            exported = {r["id"]: r for r in _csv_rows(f.read())}
        assert [exported[rid]["system_name"] for rid in ids] == [expect(n) for n in HOSTILE]
        float(exported[ids[0]]["result"])


@pytest.fixture
def live_server(tmp_path):
    """``perfledger serve`` on a free port with a 1 s request-head timeout."""
    port = free_port()
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_API_HEADER_TIMEOUT": "1", "PERFLEDGER_API_ACCESS_LOG": "false"}
    proc = subprocess.Popen([BIN / "perfledger", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port)
    yield port
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the server closes ``sock`` (EOF) within ``seconds`` (what it still sends of
    an earlier answer is read and dropped)."""
    deadline = time.monotonic() + seconds
    try:
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            if sock.recv(65536) == b"":
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return False


def test_idle_and_half_sent_connections_are_closed(live_server):
    port = live_server
    idle = socket.create_connection(("127.0.0.1", port))
    half = socket.create_connection(("127.0.0.1", port))
    half.sendall(b"GET /v1/results HTTP/1.1\r\nHost: x\r\n")  # the head never ends
    started = time.monotonic()
    assert _closed_within(idle, 15) and _closed_within(half, 15)
    assert time.monotonic() - started < 15
    # a second request that stalls on a kept-alive connection is closed too
    kept = socket.create_connection(("127.0.0.1", port), timeout=30)
    kept.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert b"HTTP/1.1 503" in kept.recv(65536)  # nothing published: served, not ready
    kept.sendall(b"GET /healthz HTTP/1.1\r\nHo")
    assert _closed_within(kept, 15)
    # and the server still answers a whole request
    ok = socket.create_connection(("127.0.0.1", port), timeout=30)
    ok.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert b"HTTP/1.1 200" in ok.recv(65536)
    for s in (idle, half, kept, ok):
        s.close()


def test_the_connection_limit_stays_below_the_file_descriptor_limit(monkeypatch):
    import resource

    from api.server import concurrency_limit
    from warehouse.settings import Settings

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (1024, hard))
    assert concurrency_limit(Settings()) == 960
    assert concurrency_limit(Settings(api_limit_concurrency=100)) == 100
    assert concurrency_limit(Settings(api_limit_concurrency=50_000)) == 960


def test_serve_port_feeds_the_links(full_warehouse, tmp_path):
    """``serve --port P`` writes next links for port P (PERFLEDGER_API_PUBLIC_URL unset)."""
    import shutil

    import httpx

    shutil.copytree(full_warehouse / "var", tmp_path / "var")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PERFLEDGER_API_PUBLIC_URL"}
    env.update(PERFLEDGER_DATA_DIR=str(tmp_path / "var"), PERFLEDGER_API_ACCESS_LOG="false")
    proc = subprocess.Popen([BIN / "perfledger", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                body = httpx.get(f"http://127.0.0.1:{port}/v1/results?limit=2", timeout=30).json()
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.2)
        assert body["next"].startswith(f"http://127.0.0.1:{port}/v1/results?")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.parametrize("url, param", [
    ("/v1/results?min_result=nan", "min_result"), ("/v1/ratios?max_ratio=inf", "max_ratio"),
    ("/v1/results?min_result=100&max_result=10", "min_result"),
    ("/v1/ratios?min_ratio=2&max_ratio=1", "min_ratio")])
def test_a_range_bound_that_is_no_number_or_above_its_pair_is_a_422(full_client, url, param):
    """nan was taken as a bound (an empty answer), and a smallest above the largest too."""
    r = full_client.get(url)
    assert r.status_code == 422 and r.json()["error"]["param"] == param, r.text


@pytest.mark.parametrize("url, param, known", [
    ("/v1/sources?source=bogus", "source", "mlperf"),
    ("/v1/hardware?kind=bogus", "kind", "accelerator"),
    ("/v1/hardware?metric=bandwith", "metric", "memory_bandwidth")])
def test_a_closed_set_value_nobody_has_is_said_with_the_known_ones(full_client, url, param,
                                                                    known):
    """An unknown source or hardware kind answered 'no rows in this snapshot', which is
    false; the hint names the value and the ones this snapshot knows."""
    body = full_client.get(url).json()
    assert body["total"] == 0
    assert f"no {param} 'bo" in body["hint"] or f"no {param} 'bandwith'" in body["hint"]
    assert known in body["hint"]
