"""Azure prices through a refresh against the local emulator: per-accelerator-hour prices,
history, as_of, and faults that must publish nothing partial."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ingest.refresh import refresh
from tests.azure_emulator import generate_items, seed_items
from tests.conftest import AZURE_PATH, full_sources, make_settings, mount_azure, write_sources
from tests.helpers import Reply
from warehouse.storage.store import Layout


@pytest.fixture
def warehouse(full_copy, server):
    tmp, _ = full_copy
    settings = make_settings(tmp, full_sources(tmp / "sources.toml", server))
    return settings


def prices(client, **params) -> list[dict]:
    return client.get("/v1/prices", params={"limit": 1000, **params}).json()["rows"]


def test_per_accelerator_hour_prices(full_client):
    rows = prices(full_client, region="eastus2", offer="on_demand", os="linux")
    by_sku = {r["arm_sku_name"]: r for r in rows}
    assert by_sku["Standard_ND96isr_H100_v5"]["price_per_accelerator_hour"] == pytest.approx(12.29)
    assert by_sku["Standard_ND96isr_H200_v5"]["price_per_accelerator_hour"] == pytest.approx(10.60)
    assert by_sku["Standard_ND96isr_H100_v5"]["accelerator_id"] == "nvidia-h100-sxm"
    assert by_sku["Standard_NV36ads_A10_v5"]["accelerator_id"] is None
    assert "Standard_D4s_v5" not in {r["arm_sku_name"] for r in prices(full_client)}
    assert {r["evidence"] for r in rows} == {"list_price"} and all(r["source_sha256"] for r in rows)


def test_offers_and_os_kept_apart(full_client):
    h100 = prices(full_client, sku="Standard_ND96isr_H100_v5", region="eastus2")
    assert sorted((r["offer"], r["os"], r["reservation_term"] or "") for r in h100) == sorted([
        ("on_demand", "linux", ""), ("on_demand", "windows", ""), ("spot", "linux", ""),
        ("low_priority", "linux", ""), ("dev_test", "linux", ""),
        ("reservation", "linux", "1 Year"), ("reservation", "linux", "3 Years")])


def test_refresh_read_every_page_and_reported_unmapped(full_warehouse):
    run = Layout(full_warehouse / "var").read_runs()[-1]
    [az] = [s for s in run["sources"] if s["source"] == "azure_prices"]
    assert az["details"]["pages"] >= 3
    assert az["details"]["items"] == len(seed_items()) - 1  # the D-series item is filtered out
    assert az["details"]["unmapped_skus"] == {"count": 1, "names": ["Standard_NV36ads_A10_v5"]}


def test_accelerators_endpoint(full_client):
    rows = {r["id"]: r for r in full_client.get("/v1/accelerators").json()["rows"]}
    assert {"sku": "Standard_ND96isr_H100_v5", "accelerators": 8} in rows["nvidia-h100-sxm"]["azure_skus"]
    assert "Nvidia B300-SXM-270GB" in rows["nvidia-b300-sxm-270gb"]["mlperf_names"]


def test_price_change_makes_a_version_and_as_of_picks_it(warehouse, server, client_for):
    items = seed_items()
    items[0] = {**items[0], "retailPrice": 90.0, "unitPrice": 90.0,
                "effectiveStartDate": "2026-11-01T00:00:00Z"}
    mount_azure(server, items, page_size=4)
    report = refresh(warehouse)
    assert report.status == "published", report.message
    client = client_for(warehouse)
    history = client.get("/v1/prices/history", params={
        "sku": "Standard_ND96isr_H100_v5", "region": "eastus2", "offer": "on_demand",
        "os": "linux"}).json()["rows"]
    assert [h["retail_price"] for h in history] == [98.32, 90.0]
    assert history[0]["valid_to"] == history[1]["valid_from"] == "2026-11-01T00:00:00+00:00"
    assert history[1]["valid_to"] is None

    def h100(as_of):
        [row] = prices(client, sku="Standard_ND96isr_H100_v5", region="eastus2",
                       offer="on_demand", os="linux", as_of=as_of)
        return row["retail_price"]

    assert h100("2026-10-25") == 98.32
    assert h100("2026-11-02") == 90.0
    assert prices(client, sku="Standard_ND96isr_H100_v5", region="eastus2", offer="on_demand",
                  os="linux")[0]["retail_price"] == 90.0


def azure_outcome(report):
    [az] = [s for s in report.sources if s.source == "azure_prices"]
    return az


def test_unchanged_prices_publish_nothing(warehouse, server):
    mount_azure(server, page_size=4)
    before = Layout(warehouse.data_path).read_current()
    report = refresh(warehouse)
    assert report.status == "unchanged", report.message
    assert Layout(warehouse.data_path).read_current() == before
    # the same bytes as the current rows were built from: nothing is parsed
    assert azure_outcome(report).details["parsed"] is False


NO_CHANGE_RUN = """
import json, sys
from ingest.refresh import refresh
from warehouse.settings import Settings
events = []
report = refresh(Settings(), on_event=lambda kind, text: events.append(kind))
heavy = sorted(m for m in ("sqlmodel", "sqlalchemy", "pyarrow", "great_expectations")
               if m in sys.modules)
print(json.dumps({"status": report.status, "events": events, "stages": report.stages,
                  "heavy": heavy}))
"""


def test_a_refresh_that_finds_nothing_new_copies_nothing_and_loads_no_schema(warehouse, server,
                                                                             client_for):
    """The usual scheduled run: sources read their previous state from the published snapshot
    in place; no staging copy is made, and neither SQLModel/SQLAlchemy (table creation) nor
    Arrow (inserts) is imported: most of what a no-change run used to spend."""
    mount_azure(server, page_size=4)
    layout = Layout(warehouse.data_path)
    before = layout.read_current()
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(warehouse.data_path),
           "PERFLEDGER_SOURCES": str(warehouse.sources)}
    done = subprocess.run([sys.executable, "-c", NO_CHANGE_RUN], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout.strip().splitlines()[-1])
    assert run["status"] == "unchanged" and run["heavy"] == []
    assert "stage" not in run["events"] and "stage" not in run["stages"]
    assert layout.read_current() == before and not list(layout.snapshots.glob("*.partial*"))

    # In a process that also serves the API (serve --refresh-every) the snapshot is already
    # open there; the refresh reads it beside the API, then stages a copy once a price moves.
    client = client_for(warehouse)
    assert prices(client, sku="Standard_ND96isr_H100_v5", region="eastus2")
    assert refresh(warehouse).status == "unchanged"
    items = seed_items()
    items[0] = {**items[0], "retailPrice": items[0]["retailPrice"] + 1,
                "unitPrice": items[0]["unitPrice"] + 1}
    mount_azure(server, items, page_size=4)
    events: list[str] = []
    report = refresh(warehouse, on_event=lambda kind, text: events.append(kind))
    assert report.status == "published", report.message
    assert "stage" in events and report.stages["stage"] > 0
    assert azure_outcome(report).details["closed_versions"] == 1


def test_same_prices_in_other_pages_are_parsed_and_still_unchanged(warehouse, server):
    mount_azure(server, page_size=3)
    before = Layout(warehouse.data_path).read_current()
    report = refresh(warehouse)
    az = azure_outcome(report)
    assert az.details["parsed"] is True and az.details["new_versions"] == 0
    assert az.details["unchanged"] == len(seed_items()) - 1
    assert report.status == "unchanged" and Layout(warehouse.data_path).read_current() == before

    # Those pages are remembered as giving the current rows: the next refresh of the same bytes
    # parses nothing, nor does one of the bytes the snapshot was built from.
    for page_size in (3, 4, 3):
        mount_azure(server, page_size=page_size)
        report = refresh(warehouse)
        assert report.status == "unchanged", report.message
        assert azure_outcome(report).details["parsed"] is False, page_size
    # A real change in those same page bytes is parsed and published, and what was remembered
    # no longer stands for the new snapshot.
    items = seed_items()
    items[0] = {**items[0], "retailPrice": items[0]["retailPrice"] + 1,
                "unitPrice": items[0]["unitPrice"] + 1}
    mount_azure(server, items, page_size=3)
    report = refresh(warehouse)
    assert report.status == "published" and azure_outcome(report).details["closed_versions"] == 1
    mount_azure(server, page_size=3)  # the old prices again, in the pages remembered before
    report = refresh(warehouse)
    assert report.status == "published", report.message
    assert azure_outcome(report).details["parsed"] is True


def test_relisted_item_opens_after_its_last_version_closed(warehouse, server, client_for):
    gone = [i for i in seed_items() if i["armSkuName"] != "Standard_NC24ads_A100_v4"]
    mount_azure(server, gone, page_size=4)
    assert refresh(warehouse).status == "published"
    mount_azure(server, seed_items(), page_size=4)  # back, same price and effective date
    report = refresh(warehouse)
    assert report.status == "published", report.message
    assert azure_outcome(report).details["new_versions"] == 1
    history = client_for(warehouse).get("/v1/prices/history", params={
        "sku": "Standard_NC24ads_A100_v4"}).json()["rows"]
    assert [h["listed"] for h in history] == [False, True]
    assert history[1]["valid_from"] == history[0]["valid_to"]  # no overlap, no gap
    assert history[1]["valid_to"] is None


def test_disappeared_item_is_unlisted_not_deleted(warehouse, server, client_for):
    items = [i for i in seed_items() if i["armSkuName"] != "Standard_NC24ads_A100_v4"]
    mount_azure(server, items, page_size=4)
    assert refresh(warehouse).status == "published"
    client = client_for(warehouse)
    assert prices(client, sku="Standard_NC24ads_A100_v4") == []
    old = prices(client, sku="Standard_NC24ads_A100_v4", as_of="2026-10-25")
    assert len(old) == 1 and old[0]["listed"] is False


def test_429_then_success(warehouse, server):
    emulator = mount_azure(server, page_size=4)
    emulator.faults[2] = [Reply(429, b"slow down", {"Retry-After": "0"})]
    report = refresh(warehouse)
    assert report.status == "unchanged", report.message
    assert len(emulator.requests) >= 5


def test_page_failing_three_times_publishes_nothing(warehouse, server, client_for):
    emulator = mount_azure(server, page_size=4)
    emulator.faults[2] = [Reply(500)] * 3
    client = client_for(warehouse)
    before = prices(client)
    current = Layout(warehouse.data_path).read_current()
    report = refresh(warehouse)
    [az] = [s for s in report.sources if s.source == "azure_prices"]
    assert az.status == "failed" and "page 2" in az.message and "HTTP 500" in az.message
    assert az.message.startswith("azure_prices: page 2: http") and az.message.count("azure_prices:") == 1
    # the run record keeps what failed: the page, its status and (redacted) URL
    assert az.error is not None and (az.error["type"], az.error["page"], az.error["status"]) == (
        "FetchError", 2, 500) and az.error["url"].startswith(server.url("/"))
    assert report.exit_code == 1
    assert Layout(warehouse.data_path).read_current() == current
    assert prices(client) == before


def test_malformed_item_names_page_and_item(warehouse, server):
    emulator = mount_azure(server, page_size=4)
    emulator.malformed[3] = {"armSkuName": "Standard_ND96isr_H100_v5", "retailPrice": 1}
    report = refresh(warehouse)
    [az] = [s for s in report.sources if s.source == "azure_prices"]
    assert az.status == "failed" and "page 3, item 0" in az.message and "missing" in az.message


def test_full_page_without_next_link_continues_with_skip(server, tmp_path):
    items = generate_items(250)
    emulator = mount_azure(server, items, page_size=100)
    emulator.drop_next_link_on = {1}
    sources = write_sources(tmp_path / "sources.toml",
                            azure_prices=f'url = "{server.url(AZURE_PATH)}"')
    report = refresh(make_settings(tmp_path, sources))
    [az] = [s for s in report.sources if s.source == "azure_prices"]
    assert az.details["items"] == 250 and az.details["pages"] == 3
    assert any("NextPageLink was empty; continued with $skip=100" in n for n in az.details["notes"])
    assert any("$skip=100" in w for w in az.warnings)


@pytest.mark.parametrize("price", ["NaN", "1e309", "-Infinity", "inf"])
def test_a_non_finite_price_is_refused_naming_page_and_item(warehouse, server, client_for, price):
    """retailPrice strings that float() turns into NaN or infinity were stored, and their
    costs 'priced' with a null cost: the source fails naming the item; last good rows stay."""
    before = prices(client_for(warehouse))
    emulator = mount_azure(server, page_size=4)
    emulator.malformed[2] = {**seed_items()[0], "retailPrice": price}
    report = refresh(warehouse)
    [az] = [s for s in report.sources if s.source == "azure_prices"]
    assert az.status == "failed" and "page 2, item 0" in az.message
    assert f"retailPrice {price!r}" in az.message and "not a finite number" in az.message
    assert prices(client_for(warehouse)) == before


def test_a_page_with_a_key_given_twice_is_refused(tmp_path, server):
    item = json.dumps(seed_items()[0])
    page = ('{"Items": [' + item[:-1] + ', "retailPrice": 0.01}], "NextPageLink": null, '
            '"Count": 1}').encode()
    server.files["/dup"] = page
    sources = write_sources(tmp_path / "sources.toml", azure_prices=f'url = "{server.url("/dup")}"')
    report = refresh(make_settings(tmp_path, sources))
    [az] = [s for s in report.sources if s.source == "azure_prices"]
    assert az.status == "failed" and "page 1: the JSON repeats key 'retailPrice'" in az.message
