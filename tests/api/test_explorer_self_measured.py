"""Self-measured runs in the explorer (#46), in a real browser: a real vLLM result file imported
with its stated hardware (8 x H100) is drawn on the frontier as its own labelled series, priced
per million tokens, beside MLPerf's gpt-oss-120b results on B200 (MLPerf has none on H100; the
accelerator chosen under Trends is overlaid), and its lengths are offered in the frontier's
choices."""

from __future__ import annotations

import httpx
import pytest

from ingest.refresh import refresh
from ingest.selfmeasured.load import Statement, import_spec
from tests.api.test_explorer import CHROMIUM, browser, ready, serve_data_dir  # noqa: F401
from tests.conftest import make_settings
from tests.helpers import copy_data_dir
from tests.ingest.selfmeasured.cases import VLLM

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

STATED = Statement("nvidia-h100-sxm", 8, "gpt-oss-120b", framework="vllm", precision="mxfp4")
SERIES = "nvidia-h100-sxm (self-measured, vLLM)"


@pytest.fixture(scope="module")
def site(frontier_warehouse, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("explorer-self")
    copy_data_dir(frontier_warehouse / "var", tmp / "var")
    settings = make_settings(tmp, frontier_warehouse / "sources.toml")
    assert refresh(settings, specs=[import_spec([VLLM], STATED)]).status == "published"
    proc, base = serve_data_dir(tmp / "var")
    yield base
    proc.terminate()
    proc.wait(15)


def test_an_imported_run_is_its_own_series_beside_mlperf_with_its_cost(site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    b200 = "nvidia-b200-sxm-180gb"
    page.goto(f"{site}/?model=gpt-oss-120b&seq=1024/128&rate=10&accelerator={b200}")
    ready(page)
    # the run's lengths are offered (InferenceX runs none at 1024/128)
    assert "1024/128" in page.locator("#seq option").evaluate_all("els => els.map(e => e.value)")
    api = httpx.get(f"{site}/v1/frontier", params={"model": "gpt-oss-120b", "isl": 1024,
                                                   "osl": 128, "rate": 10, "limit": 1000,
                                                   "mlperf_accelerator": b200}).json()
    mine = [r for r in api["rows"] if r.get("source") == "self_measured"]
    ml = [r for r in api["rows"] if r["kind"] == "mlperf"]
    assert len(mine) == 1 and ml and {r["accelerator_id"] for r in ml} == {b200}
    # drawn as its own line, named as such
    traces = page.evaluate("() => document.getElementById('frontier-chart').data.map(t => t.name)")
    assert SERIES in traces and "MLPerf (not part of the curves)" in traces
    row = page.locator("#frontier-table tbody tr[data-kind=frontier]", has_text=SERIES)
    assert row.count() == 1
    assert row.locator("[data-testid=source]").inner_text() == (
        f"Your run (vllm, {mine[0]['file_name']})")
    assert "self_measured" in row.inner_text()
    # its cost per million tokens: $10 per GPU-hour x 8 stated GPUs / (output tokens/s x 3600)
    y = 3386.194265821373 / 8
    cost = float(row.locator("td[data-v]").nth(2).get_attribute("data-v"))
    assert cost == pytest.approx(10 / (y * 3600) * 1e6)
    # beside it, MLPerf's B200 results, cited and priced the same way
    ml_rows = page.locator("#frontier-table tbody tr[data-kind=mlperf]")
    assert ml_rows.count() == len(ml)
    assert sorted(ml_rows.locator("[data-testid=citation]").all_inner_texts()) == sorted(
        r["citation"] for r in ml)


def test_the_costs_section_lists_the_run_beside_mlperf_at_the_same_rate(site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(f"{site}/?model=gpt-oss-120b&seq=1024/128&rate=10&basis=assumed")
    ready(page)
    mine = page.locator("#costs-table tbody tr[data-evidence=self_measured]")
    assert mine.count() == 1
    assert mine.locator("td").first.inner_text().startswith("Your run: gpt-oss-120b on 8 x "
                                                           "nvidia-h100-sxm (stated)")
    y = 3386.194265821373 / 8  # $10 per GPU-hour, 8 stated GPUs, the run's output tokens/s
    cost = float(mine.locator("[data-testid=cost]").get_attribute("data-v"))
    assert cost == pytest.approx(10 / (y * 3600) * 1e6)
    measured = page.locator("#costs-table tbody tr[data-evidence=measured]")
    assert measured.count() > 0  # MLPerf's gpt-oss-120b results beside it, at the same rate
    api = httpx.get(f"{site}/v1/costs", params={"model": "gpt-oss-120b", "basis": "assumed",
                                                "rate": 10, "evidence": "self_measured"}).json()
    assert [r["cost_per_million_tokens"] for r in api["rows"]] == [pytest.approx(cost)]
    assert "self_measured" in page.locator("#costs-chart").inner_text()
