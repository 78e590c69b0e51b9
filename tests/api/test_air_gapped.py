"""The first hour with no network (#36), as `make run` does it: `perfledger refresh` with the
repository's own sources.toml while every fetch is refused (each goes to a proxy nothing listens
on), then `perfledger serve` and the explorer in a real browser. MLPerf's pinned rounds and the
rules come from the built-in mirror (and samples of five clouds' catalog prices); Azure prices
and InferenceX have no carried copy, and each empty section says so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.test_explorer import CHROMIUM, browser, ready, serve_data_dir  # noqa: F401
from tests.helpers import REPO, free_port

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(make test installs it with apt-get where it can)")


@pytest.fixture(scope="module")
def air_gapped(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("air-gapped")
    dead = f"http://127.0.0.1:{free_port()}"
    blocked = {k: dead for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                 "http_proxy", "https_proxy", "all_proxy")}
    env = {**{k: v for k, v in os.environ.items() if k.upper() != "NO_PROXY"}, **blocked,
           "PERFLEDGER_DATA_DIR": str(tmp / "var"), "PERFLEDGER_HTTP_RETRIES": "0",
           "PERFLEDGER_SOURCES": str(REPO / "sources.toml")}
    done = subprocess.run([Path(sys.executable).parent / "perfledger", "refresh"], env=env,
                          cwd=tmp, capture_output=True, text=True, timeout=600)
    proc, base = serve_data_dir(tmp / "var", PERFLEDGER_SOURCES=str(REPO / "sources.toml"))
    yield done, base
    proc.terminate()
    proc.wait(15)


def test_the_refresh_says_one_short_line_per_source(air_gapped):
    done, _ = air_gapped
    assert done.returncode == 1, done.stdout + done.stderr  # published, with sources failed
    lines = done.stdout.strip().splitlines()
    by_source = {line.split(":")[0]: line for line in lines if not line.startswith(("note", "refresh"))}
    assert by_source["mlperf"].startswith("mlperf: updated, ")
    assert "built-in mirror" in by_source["mlperf"]
    assert by_source["mlperf_rules"].startswith("mlperf_rules: updated, ")
    assert by_source["azure_prices"].startswith("azure_prices: failed, never loaded — ")
    # InferenceX's carried answers stand in for the two models the mirror has; the third fails
    assert by_source["inferencex"].startswith("inferencex: partial, 472 rows — model "
                                              "gpt-oss-120b has never loaded: ")
    assert any(line.startswith("note: MLPerf could not be reached; the README's section "
                               "'Air-gapped: the built-in mirror'") for line in lines)
    # the SkyPilot catalog's carried files stand in for eleven clouds (428 rows: every line's
    # price and non-zero spot price, Mithril's one spot price a line); the others fail alone
    assert by_source["cloud_prices"].startswith("cloud_prices: partial, 428 rows — aws has "
                                                "never loaded: ")
    assert lines[-1].endswith("azure_prices did not load; cloud_prices, inferencex loaded in "
                              "part (above)")
    assert all(len(line) <= 300 for line in lines), max(map(len, lines))


def test_the_explorer_shows_the_carried_rounds_and_says_why_the_rest_is_empty(air_gapped,
                                                                               browser):  # noqa: F811
    _, base = air_gapped
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(base + "/")
    ready(page)
    assert page.locator("#ratios-table tbody tr").count() > 1  # MLPerf rows, carried rounds
    assert page.locator("#round option").count() >= 4
    prices = page.locator("#prices-empty")
    assert prices.is_visible()
    assert "the azure_prices source has never loaded" in prices.inner_text()
    banner = page.locator("#banner").inner_text()
    assert "azure_prices has never loaded" in banner
    assert "inferencex loaded in part" in banner and "model gpt-oss-120b has never loaded" in banner
    assert "stale" not in banner
    claims = page.locator("#claims-table").inner_text()
    assert "(round )" not in claims
    # asked for list prices, the cost section says why there are none
    page.goto(base + "/?basis=list_price")
    ready(page)
    costs = page.locator("#costs-empty")
    assert costs.is_visible()
    assert "the azure_prices source has never loaded" in costs.inner_text()


def test_offline_the_frontier_shows_inferencex_and_mlperf_and_costs_at_two_rates(
        air_gapped, browser):  # noqa: F811
    import httpx

    _, base = air_gapped
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(base + "/?model=deepseek-r1&seq=8192/1024")
    ready(page)
    # InferenceX's carried answer draws the curves; MLPerf's carried rounds sit beside them
    assert page.locator("#frontier-table tbody tr[data-kind=frontier]").count() > 0
    assert page.locator("#frontier-table tbody tr[data-kind=mlperf]").count() > 0
    assert page.locator("#frontier-chart .scatterlayer .trace").count() >= 2
    assert page.locator("#frontier-combined").is_visible()
    # the carried copy is named where the rows come from
    obs = httpx.get(f"{base}/v1/observations", params={"model": "deepseek-r1", "limit": 1}).json()
    assert obs["rows"][0]["source_snapshot_url"].startswith("carried copy of https://raw.githubusercontent"
                                                   ".com/SemiAnalysisAI/InferenceX-app/")
    health = httpx.get(f"{base}/healthz").json()
    [ix] = [s for s in health["sources"] if s["source"] == "inferencex"]
    assert "read from the built-in mirror's carried copies" in ix["message"]
    # cost per million tokens per accelerator at two assumed rates, each the rate's own
    costs = {}
    for rate in ("5", "15"):
        page.goto(f"{base}/?model=deepseek-r1&scenario=Offline&basis=assumed&rate={rate}")
        ready(page)
        cells = page.locator("#costs-table [data-testid=cost]").evaluate_all(
            "els => els.map(e => Number(e.dataset.v))")
        assert cells and all(c > 0 for c in cells)
        costs[rate] = sorted(cells)
    assert costs["15"] == [pytest.approx(3 * c) for c in costs["5"]]


def test_make_run_ends_with_the_summary(tmp_path):
    """`make run` is `perfledger run`: refresh, serve, and the last lines say where the
    explorer is and which sources came from where; no make error for a partial refresh."""
    import time

    port = free_port()
    dead = f"http://127.0.0.1:{free_port()}"
    env = {**{k: v for k, v in os.environ.items() if k.upper() != "NO_PROXY"},
           **{k: dead for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
           "PERFLEDGER_DATA_DIR": str(tmp_path / "var"), "PERFLEDGER_HTTP_RETRIES": "0",
           "PERFLEDGER_SOURCES": str(REPO / "sources.toml")}
    proc = subprocess.Popen([Path(sys.executable).parent / "perfledger", "run", "--port",
                             str(port)], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            if line.startswith("scheduled refreshes:"):
                break
    finally:
        proc.terminate()
        proc.wait(15)
    tail = lines[-5:]
    base = f"http://127.0.0.1:{port}"
    assert tail[0] == (f"perfledger is up: the explorer at {base}/ , the API docs at "
                       f"{base}/docs , MCP at {base}/mcp/ (stop with Ctrl-C)"), lines
    assert tail[1] == "from the network: curated"
    assert tail[2] == ("from the built-in mirror (no network): mlperf (v4.1, v5.1, v6.0, v6.1); "
                       "mlperf_rules; cloud_prices (azure, daytona, gcp, hyperbolic, lambda, "
                       "mithril, nebius, oci, runpod, vast, verda); "
                       "inferencex (DeepSeek-R1-0528, DeepSeek-V4-Pro)")
    assert tail[3].startswith("needs the network: azure_prices; cloud_prices (aws")
    assert tail[4].startswith("scheduled refreshes: `perfledger refresh` exits 0")
