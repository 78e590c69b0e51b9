"""The whole path as a user runs it: a real HTTP source, the `perfledger` command, a real
uvicorn server, HTTP reads."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import write_sources
from tests.helpers import SUMMARY_CSV, free_port

BIN = Path(sys.executable).parent


def wait_until_up(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not come up")


def test_refresh_command_then_serve_then_read(server, tmp_path):
    body = SUMMARY_CSV.read_bytes()
    server.files["/summary.csv"] = body
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf=f'rounds = {{ "v6.1" = "{server.url("/summary.csv")}" }}')
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_SOURCES": str(sources)}
    done = subprocess.run([BIN / "perfledger", "refresh", "--report", str(tmp_path / "r.json")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "mlperf: updated, 492 rows" in done.stdout
    assert (tmp_path / "r.json").exists()

    port = free_port()
    api = subprocess.Popen([BIN / "perfledger", "serve", "--port", str(port)], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/healthz")
        got = httpx.get(f"http://127.0.0.1:{port}/v1/results?limit=1000&division=all&availability=all").json()
        assert got["total"] == 492
        assert {r["source_sha256"] for r in got["rows"]} == {hashlib.sha256(body).hexdigest()}

        again = subprocess.run([BIN / "perfledger", "refresh"], env=env, capture_output=True,
                               text=True, timeout=300)
        assert again.returncode == 0 and "mlperf: unchanged" in again.stdout
        assert server.hits("/summary.csv")[-1].headers.get("if-none-match")
    finally:
        api.terminate()
        api.wait(10)


def test_refresh_command_fails_with_one_line_per_source(tmp_path):
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf='rounds = { "v6.1" = "http://127.0.0.1:9/summary.csv" }')
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_SOURCES": str(sources), "PERFLEDGER_HTTP_RETRIES": "0"}
    done = subprocess.run([BIN / "perfledger", "refresh"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("mlperf: failed, never loaded — v6.1: http://127.0.0.1:9/… ")
    assert sorted(lines[1:6]) == [f"{name}: disabled" for name in (
        "azure_prices", "cloud_prices", "curated", "inferencex", "mlperf_rules")]
    assert "Traceback" not in done.stderr


def test_bad_sources_file_is_one_line_error(tmp_path):
    bad = tmp_path / "sources.toml"
    bad.write_text("[mlperf]\nrounds = 3\n")
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_SOURCES": str(bad)}
    done = subprocess.run([BIN / "perfledger", "refresh"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("ConfigError: ") and "[mlperf.rounds]" in done.stderr


def test_calc_command_twin(full_warehouse, monkeypatch):
    """`perfledger calc NAME k=v…` answers what /v1/calc/NAME?k=v… answers on the same
    snapshot, with the API's defaults and the API's words for a wrong input."""
    import json

    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from api.app import create_app
    from cli.main import app
    from tests.conftest import make_settings

    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(full_warehouse / "var")}
    runner = CliRunner()

    def cli(*args: str):  # in process: the installed command is run once, below
        return runner.invoke(app, ["calc", *args], env=env)

    with TestClient(create_app(make_settings(full_warehouse, full_warehouse / "sources.toml"))
                    ) as api:
        asked = api.get("/v1/calc/decode-bound", params={
            "hardware": "nvidia-gb200-nvl72", "model": "illustrative-1t-moe"}).json()
        batch = api.get("/v1/calc/batch", params=[
            ("hardware", "nvidia-h100-sxm"), ("model", "illustrative-100b"), ("batch", "1"),
            ("batch", "8")]).json()
    assert round(asked["outputs"]["tokens_per_s_per_user"]) == 17442
    installed = subprocess.run([BIN / "perfledger", "calc", "decode-bound",
                                "hardware=nvidia-gb200-nvl72", "model=illustrative-1t-moe"],
                               env=env, capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0, installed.stderr
    assert json.loads(installed.stdout) == asked
    done = cli("decode-bound", "hardware_id=nvidia-gb200-nvl72", "model_id=illustrative-1t-moe")
    assert done.exit_code == 0, done.stderr  # the names the command took before
    assert json.loads(done.stdout) == asked
    # the API's defaults (precision, context, efficiency, region) and a repeated key as a list
    done = cli("batch", "hardware=nvidia-h100-sxm", "model=illustrative-100b", "batch=1", "batch=8")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout) == batch
    for args, said in [
            (["ridge", "hardwar=nvidia-h100-sxm"],
             "ridge: unknown parameter 'hardwar' (did you mean 'hardware'?); accepted: hardware"),
            (["decode-bound", "hardware=nvidia-h100-sxm", "model=illustrative-100b",
              "context=abc"], "decode-bound: context: Input should be a valid integer"),
            (["speculative", "gamma=4"], "speculative: alpha: Field required"),
            (["capacity", "params=1e9"], "capacity: "),
            (["ridges"], "unknown calculator 'ridges'; known: bandwidth-needed, batch, capacity"),
            (["../../v1/sources"], "unknown calculator '../../v1/sources'")]:  # calculators only
        bad = cli(*args)
        assert bad.exit_code == 1 and "Traceback" not in bad.stderr, bad.stderr
        assert bad.stderr.startswith(f"PerfledgerError: {said}"), bad.stderr
    table = cli("grid", "format=csv")  # another format, as the API sends it
    assert table.exit_code == 0 and table.stdout.startswith("hardware,model,"), table.stderr
    from warehouse.figures import calc_inputs

    def broken(con, **kw):
        raise RuntimeError("a bug")

    monkeypatch.setattr(calc_inputs, "ridge", broken)  # the API's 500, not a traceback
    crashed = cli("ridge", "hardware=nvidia-h100-sxm")
    assert crashed.exit_code == 1 and crashed.stderr.startswith("PerfledgerError: ridge: ")
