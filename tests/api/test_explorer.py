"""The explorer page in a real browser (Debian's chromium driven by Playwright): it renders the
warehouse's numbers, follows filter changes, keeps filters in the URL, and never leaves the
API's own origin. Screenshots go to var/screenshots/ for review."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.helpers import REPO, copy_data_dir, free_port
from tests.test_end_to_end import wait_until_up

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = REPO / "var" / "screenshots"

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(make test installs it with apt-get where it can)")


@pytest.fixture(scope="module")
def site(full_warehouse, tmp_path_factory):
    with served_copy(full_warehouse, tmp_path_factory.mktemp("explorer")) as base:
        yield base


def serve_data_dir(var: Path, **env_extra: str):
    port = free_port()
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(var), **env_extra}
    proc = subprocess.Popen([Path(sys.executable).parent / "perfledger", "serve", "--port",
                             str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_until_up(base + "/healthz")
    return proc, base


@contextmanager
def served_copy(warehouse: Path, tmp: Path) -> Iterator[str]:
    """`perfledger serve` over a private copy (in ``tmp``) of a warehouse a fixture built: its
    base URL; the server is stopped after."""
    copy_data_dir(warehouse / "var", tmp / "var")
    proc, base = serve_data_dir(tmp / "var")
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(15)


@pytest.fixture(scope="module")
def rounds_site(evidence_warehouse, tmp_path_factory):
    """Both rounds, the rules, the curated files and Azure prices: trends have two rounds."""
    with served_copy(evidence_warehouse, tmp_path_factory.mktemp("explorer-rounds")) as base:
        yield base


@pytest.fixture(scope="module")
def stale_site(full_warehouse, tmp_path_factory):
    """The full warehouse after a refresh in which the Azure source failed (nothing listens
    where it points): its last good prices keep serving, and the page must say so."""
    from ingest.refresh import refresh
    from tests.conftest import full_sources, make_settings

    tmp = tmp_path_factory.mktemp("explorer-stale")
    copy_data_dir(full_warehouse / "var", tmp / "var")
    sources = full_sources(tmp / "sources.toml", None,
                           azure_prices=f'url = "http://127.0.0.1:{free_port()}/prices"')
    report = refresh(make_settings(tmp, sources))
    assert report.status in ("partial", "failed", "unchanged"), report.as_dict()
    proc, base = serve_data_dir(tmp / "var", PERFLEDGER_SOURCES=str(sources))
    yield base
    proc.terminate()
    proc.wait(15)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


def ready(page) -> None:
    # a selector, not a JavaScript predicate: the page's content-security policy refuses eval,
    # and Playwright's wait_for_function evaluates its predicate with eval
    page.locator("body[data-ready='true']").wait_for(state="attached", timeout=60_000)


def test_explorer_shows_measured_next_to_claimed(site, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{site}/?model=deepseek-r1&scenario=Interactive")
    ready(page)

    row = page.locator("#ratios-table tbody tr",
                       has_text="GB300 NVL72 (72x GB300-288GB_aarch64, TensorRT)").filter(
                       has_text="679,740")
    assert row.locator("td").nth(1).inner_text() == "NVIDIA"
    assert row.locator("[data-testid=ratio]").inner_text() == "0.37"
    assert page.locator("#claims-table", has_text="no MLPerf submission in round v6.1").count() == 1
    assert page.locator("#specs-table .badge.vendor_projection").count() >= 1
    assert "Snapshot" in page.locator("#freshness").inner_text()
    assert page.locator("#ratios-chart .bar, #ratios-chart .point").count() > 0
    page.screenshot(path=str(SHOTS / "explorer-deepseek-r1.png"), full_page=True)

    page.select_option("#model", "llama3.1-8b")
    ready(page)
    assert "model=llama3.1-8b" in page.url
    mi355 = page.locator("#ratios-table tbody tr", has_text="XE9785L_8xMI355X").first
    assert mi355.locator("[data-testid=ratio]").inner_text() == "0.82"

    page.select_option("#basis", "assumed")
    ready(page)
    page.fill("#rate", "12.29")
    page.locator("#rate").dispatch_event("change")
    ready(page)
    assert page.locator("#basis").input_value() == "assumed" and "rate=12.29" in page.url
    first = page.locator("#costs-table tbody tr").first
    tokens = float(first.locator("td").nth(5).get_attribute("data-v"))
    accelerators = int(first.locator("td").nth(4).inner_text())
    cost = float(first.locator("[data-testid=cost]").get_attribute("data-v"))
    assert cost == pytest.approx(12.29 * accelerators / (tokens * 3600) * 1e6, rel=1e-9)
    page.screenshot(path=str(SHOTS / "explorer-llama3.1-8b-assumed.png"), full_page=True)

    page.select_option("#basis", "list_price")
    ready(page)
    assert page.locator("#costs-table .none", has_text="no price").count() > 0

    shared = browser.new_page()
    shared.goto(page.url)
    ready(shared)
    assert shared.locator("#model").input_value() == "llama3.1-8b"

    origin = urlsplit(site).netloc
    outside = [u for u in requests if not u.startswith(("data:", "blob:")) and urlsplit(u).netloc != origin]
    assert outside == []


def test_every_number_links_to_its_source_row(site, browser):
    page = browser.new_page()
    page.goto(f"{site}/?model=deepseek-r1")
    ready(page)
    hrefs = page.eval_on_selector_all("#ratios-table a, #costs-table a, #prices-table a",
                                      "els => els.map(e => e.getAttribute('href'))")
    assert hrefs and all(h.startswith("/v1/") for h in hrefs)
    import httpx
    assert httpx.get(site + hrefs[0]).status_code == 200


def test_keyboard_reaches_every_control(site, browser):
    page = browser.new_page()
    page.goto(site + "/")
    ready(page)
    seen = set()
    for _ in range(12):
        page.keyboard.press("Tab")
        seen.add(page.evaluate("document.activeElement.id"))
    assert {"model", "round", "scenario", "basis"} <= seen


@pytest.mark.parametrize("path, rendered", [
    ("/docs", "#swagger-ui .opblock"),          # Swagger UI lists the operations
    ("/redoc", "[data-section-id]"),             # ReDoc renders its sections
])
def test_api_docs_render_with_no_request_leaving_the_origin(site, browser, path, rendered):
    page = browser.new_page()
    requests: list[str] = []
    blocked: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("requestfailed", lambda r: blocked.append(r.url)
            if (r.failure or "") in ("csp", "net::ERR_BLOCKED_BY_CSP") else None)
    page.goto(site + path)
    page.wait_for_selector(rendered, timeout=60_000)
    assert page.locator(rendered).count() > 0
    origin = urlsplit(site).netloc
    outside = [u for u in requests if not u.startswith(("data:", "blob:"))
               and urlsplit(u).netloc != origin]
    # ReDoc's footer asks for its logo on a CDN: the page's CSP stops it in the browser
    assert [u for u in outside if u not in blocked] == []


def charts_have_titled_axes(page) -> list[str]:
    """Ids of the charts drawn on the page; fails on one without a titled value axis."""
    drawn = page.evaluate("""() => [...document.querySelectorAll('.chart')]
        .filter((el) => !el.hidden && el.layout)
        .map((el) => [el.id, el.layout.xaxis && el.layout.xaxis.title && el.layout.xaxis.title.text,
                      el.layout.yaxis && el.layout.yaxis.title && el.layout.yaxis.title.text,
                      el.layout.title && el.layout.title.text])""")
    for chart_id, x, y, title in drawn:
        assert x and y, f"{chart_id}: axis titles {x!r}, {y!r}"
        assert "evidence" in (title or ""), f"{chart_id}: no evidence label in {title!r}"
    return [d[0] for d in drawn]


def test_every_chart_has_titled_axes_and_its_evidence(site, browser):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(f"{site}/?model=llama3.1-8b&scenario=Server")
    ready(page)
    drawn = charts_have_titled_axes(page)
    assert {"ratios-chart", "costs-chart", "latency-chart", "trends-chart", "claims-chart",
            "prices-chart"} <= set(drawn)
    # the top 15 by default, every system when asked
    table_rows = page.locator("#ratios-table tbody tr").count()
    assert table_rows > 15
    bars = "document.getElementById('ratios-chart').data.reduce((n, t) => n + t.y.length, 0)"
    assert page.evaluate(bars) == 15
    page.check("#all")
    ready(page)
    assert page.evaluate(bars) == table_rows


def test_division_and_availability_default_to_what_a_buyer_can_get(site, browser):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(f"{site}/?model=deepseek-r1&scenario=Interactive")
    ready(page)
    assert page.locator("#division").input_value() == "closed"
    assert page.locator("#availability").input_value() == "available"
    preview = "Vera Rubin NVL72"  # the top Interactive ratio of v6.1, a preview system
    assert page.locator("#ratios-table", has_text=preview).count() == 0
    cells = page.locator("#ratios-table tbody tr td:nth-child(5)").all_inner_texts()
    assert cells and set(cells) == {"available"}
    page.select_option("#availability", "all")
    ready(page)
    assert "availability=all" in page.url
    row = page.locator("#ratios-table tbody tr", has_text=preview)
    assert row.count() == 1 and row.locator("td").nth(4).inner_text() == "preview"
    page.goto(f"{site}/?model=llama3.1-8b&scenario=Offline")  # an rdi (not for sale) system
    ready(page)
    assert page.locator("#costs-table", has_text="Naeem Khoshnevis").count() == 0
    page.select_option("#availability", "all")
    ready(page)
    assert page.locator("#costs-table", has_text="Naeem Khoshnevis").count() >= 1


def test_latency_section_shows_the_bounds_recomputed_here(site, browser):
    import httpx

    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(f"{site}/?model=deepseek-r1&scenario=Interactive&answer=300")
    ready(page)
    rule = httpx.get(f"{site}/v1/rules", params={"model": "deepseek-r1", "scenario": "Interactive",
                                                 "current": "true"}).json()["rows"]
    ttft, tpot = rule[0]["ttft_ms"], rule[0]["tpot_ms"]
    rows = page.locator("#latency-table tbody tr")
    assert rows.count() > 3
    for i in range(3):
        row = rows.nth(i)
        result = float(row.locator("td").nth(4).get_attribute("data-v"))
        assert float(row.locator("[data-testid=floor]").get_attribute("data-v")) == \
            pytest.approx(1000 / tpot)
        assert float(row.locator("[data-testid=streams]").get_attribute("data-v")) == \
            pytest.approx(result * tpot / 1000)
        assert float(row.locator("[data-testid=answer]").get_attribute("data-v")) == \
            pytest.approx((ttft + 299 * tpot) / 1000)
        assert f"TPOT {tpot:,.0f} ms" in row.inner_text()
    assert f"TPOT ≤ {tpot:,.0f} ms" in page.locator("#latency-rule").inner_text()


def test_trends_section_shows_each_rounds_best_per_accelerator(rounds_site, browser):
    import httpx

    acc = "nvidia-b200-sxm-180gb"
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(f"{rounds_site}/?model=llama2-70b&scenario=Server&accelerator={acc}")
    ready(page)
    results = httpx.get(f"{rounds_site}/v1/results", params={
        "model": "llama2-70b", "scenario": "Server", "accelerator": acc, "division": "closed",
        "availability": "available", "units": "Tokens/s", "limit": 1000}).json()["rows"]
    best: dict[str, tuple[float, str]] = {}
    for r in results:
        if r["total_accelerators"]:
            per = r["result"] / r["total_accelerators"]
            if per > best.get(r["round"], (0, ""))[0]:
                best[r["round"]] = (per, r["system_name"])
    assert set(best) == {"v5.1", "v6.1"}
    rows = page.locator("#trends-table tbody tr")
    assert rows.count() == 2
    for i in range(2):
        cells = rows.nth(i).locator("td")
        round_name = cells.nth(0).inner_text()
        per = float(cells.nth(2).get_attribute("data-v"))
        assert per == pytest.approx(best[round_name][0])
        assert cells.nth(4).inner_text() == best[round_name][1]
    change = rows.nth(1).locator("td").nth(8).inner_text()
    expected = (best["v6.1"][0] / best["v5.1"][0] - 1) * 100
    assert change == f"{'+' if expected >= 0 else ''}{expected:.1f} %"
    charts_have_titled_axes(page)


def test_an_empty_view_says_why_and_what_to_change(site, browser):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(f"{site}/?model=deepseek-r1&scenario=Interactive&basis=list_price")
    ready(page)
    box = page.locator("#costs-empty")
    assert box.is_visible()
    assert "No accelerator in this view has an Azure list price in eastus2 — switch the price " \
           "basis to an assumed rate" in box.inner_text()
    page.click("#use-assumed")
    ready(page)
    assert page.locator("#basis").input_value() == "assumed" and not box.is_visible()
    assert page.locator("#costs-table [data-testid=cost]").count() > 0


def test_bad_url_parameters_fall_back_with_a_visible_note(site, browser):
    page = browser.new_page()
    page.goto(f"{site}/?model=nosuch-model&division=weird&answer=-3")
    ready(page)
    note = page.locator("#param-note")
    assert note.is_visible()
    text = note.inner_text()
    assert "model=nosuch-model" in text and "division=weird" in text and "answer=-3" in text
    assert page.locator("#model").input_value() == "deepseek-r1"
    assert page.locator("#division").input_value() == "closed"
    assert page.locator("#ratios-table tbody tr").count() > 1


def test_a_stale_source_is_named_in_a_banner(stale_site, browser):
    page = browser.new_page()
    page.goto(stale_site + "/")
    ready(page)
    banner = page.locator("#banner")
    assert banner.is_visible()
    assert "azure_prices" in banner.inner_text() and "stale" in banner.inner_text()


def test_each_tables_csv_link_downloads_its_rows(site, browser):
    import csv
    import io

    import httpx

    page = browser.new_page()
    page.goto(f"{site}/?model=llama3.1-8b&scenario=Server")
    ready(page)
    for table in ("ratios", "costs", "latency"):
        href = page.locator(f"#{table}-csv").get_attribute("href")
        assert "format=csv" in href and "model=llama3.1-8b" in href
        body = httpx.get(site + href)
        assert body.status_code == 200 and body.headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(body.text)))
        assert len(rows) == page.locator(f"#{table}-table tbody tr").count() > 0


def test_tables_sort_when_a_header_is_clicked(site, browser):
    page = browser.new_page()
    page.goto(f"{site}/?model=llama3.1-8b&scenario=Server")
    ready(page)
    header = page.locator("#ratios-table thead th", has_text="Ratio").locator("button")
    header.click()
    values = [float(v) for v in page.locator("#ratios-table [data-testid=ratio]").evaluate_all(
        "els => els.map(e => e.dataset.v)")]
    assert values == sorted(values)
    header.press("Enter")  # keyboard too
    values = [float(v) for v in page.locator("#ratios-table [data-testid=ratio]").evaluate_all(
        "els => els.map(e => e.dataset.v)")]
    assert values == sorted(values, reverse=True)


@pytest.mark.parametrize("name, viewport", [("desktop", {"width": 1366, "height": 900}),
                                            ("phone", {"width": 390, "height": 844})])
def test_screenshots_at_desktop_and_phone_width(rounds_site, browser, name, viewport):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport=viewport)
    page.goto(f"{rounds_site}/?model=llama2-70b&scenario=Server")
    ready(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"] + 1, f"the page scrolls sideways at {viewport['width']} px"
    page.screenshot(path=str(SHOTS / f"explorer-{name}.png"), full_page=True)


def test_defaults_are_the_latest_round_and_one_accuracy_target(rounds_site, browser):
    """#48: all rounds and both llama2-70b accuracy targets by default showed each system
    twice, rounds mixed; now the latest round and the first target, both switchable."""
    import httpx

    latest = httpx.get(f"{rounds_site}/v1/meta").json()["rounds"][-1]
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{rounds_site}/?model=llama2-70b&scenario=Server")
    ready(page)
    assert page.locator("#round").input_value() == latest == "v6.1"
    assert page.locator("#target-label").is_visible()
    assert page.locator("#target option:checked").inner_text() == "llama2-70b-99.9"

    def table_matches(**params) -> None:
        href = page.locator("#ratios-csv").get_attribute("href")
        asked = {k: v for k, v in params.items() if v is not None}
        for k, v in asked.items():
            assert f"{k}={v}" in href, (k, href)
        assert ("round=" in href) == ("round" in asked)
        rows = httpx.get(f"{rounds_site}/v1/ratios", params={
            "scenario": "Server", "division": "closed", "availability": "available",
            "limit": 1000, **asked}).json()["rows"]
        assert page.locator("#ratios-table tbody tr").count() == len(rows) > 0
        assert {r["model_id"] for r in rows} <= {asked["model"]} | (
            {"llama2-70b-99", "llama2-70b-99.9"} if asked["model"] == "llama2-70b" else set())

    table_matches(model="llama2-70b-99.9", round=latest)
    page.select_option("#round", "all")
    ready(page)
    assert "round=all" in page.url
    table_matches(model="llama2-70b-99.9")
    page.select_option("#target", "99")
    ready(page)
    table_matches(model="llama2-70b-99")
    page.select_option("#target", "both")
    ready(page)
    assert "target=both" in page.url
    table_matches(model="llama2-70b")


def _rendered(page, chart: str) -> dict:
    """What a chart drew: its y tick labels (lines joined by a space), the boxes of its
    legend and x axis title, its width and its drawing's width."""
    return page.evaluate("""(id) => {
        const el = document.getElementById(id), box = (n) => n && n.getBoundingClientRect();
        const rect = (r) => r && {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
        const labels = [...el.querySelectorAll('.ytick text')].map((t) => {
            const lines = t.querySelectorAll('tspan.line');
            return (lines.length ? [...lines].map((l) => l.textContent).join(' ') : t.textContent);
        });
        const left = Math.min(...[...el.querySelectorAll('.ytick text')].map((t) => box(t).left));
        return {labels, left, chart: rect(box(el)), svg: box(el.querySelector('.main-svg')).width,
                legend: rect(box(el.querySelector('.legend'))),
                xtitle: rect(box(el.querySelector('.xtitle')))};
    }""", chart)


def _overlap(a: dict | None, b: dict | None) -> bool:
    """Two boxes share more than a pixel each way (touching is not overlapping)."""
    return bool(a and b and a["left"] < b["right"] - 1 and b["left"] < a["right"] - 1
                and a["top"] < b["bottom"] - 1 and b["top"] < a["bottom"] - 1)


def assert_fits(page, width: int) -> list[str]:
    """Nothing scrolls sideways (the page, a table, a section), every drawn chart lies inside
    its box with its labels, legend and axis titles, no label is shortened ("…") and no
    legend lies over an axis title; returns the rendered y labels of the ratios chart."""
    sideways = page.evaluate("""() => [document.documentElement,
        ...document.querySelectorAll('.scroll, .chart, main > section')]
        .filter((e) => e.offsetParent !== null || e === document.documentElement)
        .filter((e) => e.scrollWidth > e.clientWidth + 1)
        .map((e) => `${e.id || e.className || e.tagName}: ${e.scrollWidth} > ${e.clientWidth}`)""")
    assert sideways == [], sideways
    drawn_charts = page.evaluate("""() => [...document.querySelectorAll('.chart')]
        .filter((el) => !el.hidden && el.layout).map((el) => el.id)""")
    assert {"ratios-chart", "costs-chart", "latency-chart", "claims-chart"} <= set(drawn_charts)
    for chart in drawn_charts:
        drawn = _rendered(page, chart)
        assert drawn["svg"] <= drawn["chart"]["right"] - drawn["chart"]["left"] + 1, chart
        assert drawn["left"] >= drawn["chart"]["left"] - 1, f"{chart}: labels cut at the left"
        assert not any("…" in t for t in drawn["labels"]), drawn["labels"]
        assert not _overlap(drawn["legend"], drawn["xtitle"]), (chart, drawn)
        for part in ("legend", "xtitle"):  # drawn inside the figure, not cut at its edge
            assert drawn[part] is None or drawn["chart"]["left"] - 1 <= drawn[part]["left"] and \
                drawn[part]["right"] <= drawn["chart"]["right"] + 1, (chart, part, drawn)
    return [" ".join(t.split()) for t in _rendered(page, "ratios-chart")["labels"]]


@pytest.mark.parametrize("width", [1400, 390])
def test_labels_are_never_cut_and_nothing_scrolls_sideways(rounds_site, browser, width):
    """#48: long system labels were cut, tables scrolled sideways at 1,400 px, an axis title
    sat under the legend. At a desktop and a phone width: no sideways scroll of the page or of
    any table, every chart inside its box, every bar labelled with the full system name, and
    no legend over an axis title."""
    import httpx

    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{rounds_site}/?model=llama2-70b&scenario=Server&availability=all")
    ready(page)
    shown = assert_fits(page, width)
    page.screenshot(path=str(SHOTS / f"explorer-fit-{width}.png"), full_page=True)
    rows = httpx.get(f"{rounds_site}/v1/ratios", params={
        "model": "llama2-70b-99.9", "round": "v6.1", "scenario": "Server", "availability": "all",
        "sort": "-ratio", "limit": 15}).json()["rows"]
    expected = {f"{r['organization']}: {r['system_name']}" for r in rows}
    assert expected == set(shown), expected ^ set(shown)


def test_the_banner_names_sources_and_hosts_not_urls(stale_site, browser):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(stale_site + "/")
    ready(page)
    text = page.locator("#banner").inner_text()
    assert "azure_prices" in text and "127.0.0.1:" in text
    assert "://" not in text and "/prices" not in text, text
    assert "://" not in page.locator("#freshness").inner_text()
