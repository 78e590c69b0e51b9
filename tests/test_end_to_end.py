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


def test_calc_command_twin(full_warehouse):
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(full_warehouse / "var")}
    import json
    for names in (["hardware=nvidia-gb200-nvl72", "model=illustrative-1t-moe"],  # as /v1/calc
                  ["hardware_id=nvidia-gb200-nvl72", "model_id=illustrative-1t-moe"]):
        done = subprocess.run([BIN / "perfledger", "calc", "decode-bound", *names],
                              env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert round(json.loads(done.stdout)["outputs"]["tokens_per_s_per_user"]) == 17442
    typo = subprocess.run([BIN / "perfledger", "calc", "ridge", "hardwar=nvidia-h100-sxm"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert typo.returncode == 1 and "Traceback" not in typo.stderr
    assert typo.stderr.strip() == "PerfledgerError: ridge: takes hardware=; got hardwar="
    bad = subprocess.run([BIN / "perfledger", "calc", "capacity", "params=1e9"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and bad.stderr.startswith("PerfledgerError: capacity:")
