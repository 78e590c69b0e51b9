"""The explorer's frontier chart in a real browser (Debian's chromium via Playwright): one line
per accelerator from /v1/frontier, MLPerf results overlaid and labelled, the table and its CSV
link showing the same rows as the API."""

from __future__ import annotations

import csv
import io

import httpx
import pytest

from tests.api.test_explorer import (  # noqa: F401
    CHROMIUM,
    SHOTS,
    assert_fits,
    browser,
    ready,
    served_copy,
)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


@pytest.fixture(scope="module")
def site(frontier_warehouse, tmp_path_factory):
    with served_copy(frontier_warehouse, tmp_path_factory.mktemp("explorer-frontier")) as base:
        yield base


def test_the_frontier_chart_draws_lines_per_accelerator_and_labels_mlperf(site, browser):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(f"{site}/?model=deepseek-r1&seq=8192/1024")
    ready(page)
    api = httpx.get(f"{site}/v1/frontier", params={"model": "deepseek-r1", "isl": 8192,
                                                    "osl": 1024, "limit": 1000}).json()["rows"]
    curve = [r for r in api if r["kind"] == "frontier"]
    ml = [r for r in api if r["kind"] == "mlperf"]
    assert curve and ml
    table = page.locator("#frontier-table tbody tr")
    assert page.locator("#frontier-table tbody tr[data-kind=frontier]").count() == len(curve)
    assert page.locator("#frontier-table tbody tr[data-kind=mlperf]").count() == len(ml)
    assert table.count() == len(curve) + len(ml)
    # one line per accelerator plus the MLPerf markers, labelled on the chart
    accelerators = {r["series"] for r in curve}
    assert page.locator("#frontier-chart .scatterlayer .trace").count() == len(accelerators) + 1
    texts = "els => els.map(e => e.textContent)"  # SVG text has no innerText
    legend = page.locator("#frontier-chart .legendtext").evaluate_all(texts)
    assert set(legend) == accelerators | {"MLPerf (not part of the curves)"}
    labels = page.locator("#frontier-chart .scatterlayer .textpoint").evaluate_all(texts)
    assert any(t.startswith("MLPerf Server") for t in labels)
    assert any(t.startswith("MLPerf Offline") for t in labels)
    # the table's best throughput per GPU on B200 is the API's
    b200 = [float(v) for v in page.locator(
        "#frontier-table tbody tr[data-kind=frontier]", has_text="nvidia-b200-sxm-180gb").locator(
        "[data-testid=y]").evaluate_all("els => els.map(e => e.dataset.v)")]
    assert max(b200) == pytest.approx(max(r["output_tput_per_gpu"] for r in curve
                                          if r["series"] == "nvidia-b200-sxm-180gb"))
    # MLPerf beside InferenceX: each MLPerf row shows its citation, the section says the view
    # combines MLPerf with non-MLPerf results, and carries the trademark notice
    cited = page.locator("#frontier-table tbody tr[data-kind=mlperf] [data-testid=citation]")
    assert sorted(cited.all_inner_texts()) == sorted(r["citation"] for r in ml)
    combined = page.locator("#frontier-combined")
    assert combined.is_visible() and combined.inner_text() == api[0]["combined"]
    assert "MLPerf is a trademark of MLCommons Association" in page.locator(
        "[data-testid=trademark]").inner_text()
    # the MLPerf markers' hover text carries the citation and the notice
    hover = page.evaluate("() => document.getElementById('frontier-chart').data"
                          ".find(t => t.name.startsWith('MLPerf')).hovertext")
    assert all(any(r["citation"].replace("&", "&amp;") in h for h in hover) for r in ml)
    assert all("not verified by MLCommons" in h for h in hover)
    # the CSV link is the API's own CSV of the same rows
    href = page.locator("#frontier-csv").get_attribute("href")
    assert href.startswith("/v1/frontier?") and "format=csv" in href
    rows = list(csv.DictReader(io.StringIO(httpx.get(site + href).text)))
    assert len(rows) == len(api)
    page.screenshot(path=str(SHOTS / "explorer-frontier.png"), full_page=True)

    page.select_option("#seq", "1024/1024")
    ready(page)
    assert "seq=1024%2F1024" in page.url or "seq=1024/1024" in page.url
    assert page.locator("#frontier-table tbody tr[data-kind=frontier]").count() > 0


@pytest.mark.parametrize("width", [1400, 390])
def test_the_default_page_with_a_frontier_fits_desktop_and_phone(site, browser, width):  # noqa: F811
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{site}/")
    ready(page)
    assert page.evaluate("!document.getElementById('frontier-chart').hidden")
    assert_fits(page, width)
