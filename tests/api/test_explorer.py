"""The explorer page in a real browser (Debian's chromium driven by Playwright): it renders the
warehouse's numbers, follows filter changes, keeps filters in the URL, and never leaves the
API's own origin. Screenshots go to var/screenshots/ for review."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    tmp = tmp_path_factory.mktemp("explorer")
    copy_data_dir(full_warehouse / "var", tmp / "var")
    port = free_port()
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp / "var")}
    proc = subprocess.Popen([Path(sys.executable).parent / "perfledger", "serve", "--port",
                             str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_until_up(base + "/healthz")
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
    page.wait_for_function("document.body.dataset.ready === 'true'", timeout=60_000)


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
    assert page.locator("#claims-table .badge.vendor_projection").count() >= 1
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
    assert "basis=assumed" in page.url and "rate=12.29" in page.url
    first = page.locator("#costs-table tbody tr").first
    tokens = float(first.locator("td").nth(3).inner_text().replace(",", ""))
    accelerators = int(first.locator("td").nth(2).inner_text())
    cost = float(first.locator("[data-testid=cost]").inner_text().replace(",", ""))
    assert cost == pytest.approx(12.29 * accelerators / (tokens * 3600) * 1e6, rel=2e-3)
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
