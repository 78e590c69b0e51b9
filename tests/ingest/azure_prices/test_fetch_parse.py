"""Azure price items: classification, hourly normalisation, bad items."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.azure_prices import fetch as azure_fetch
from ingest.azure_prices import parse as azure_prices
from ingest.http import Raw
from tests.azure_emulator import matches, seed_items
from warehouse.exceptions import ParseError
from warehouse.model.vocabulary import HOURS_IN_TERM

NOW = datetime(2026, 10, 25, tzinfo=UTC)


def page(items: list) -> Raw:
    return Raw(source="azure_prices", url="x", body=json.dumps({"Items": items}).encode(),
               fetched_at=NOW)


@pytest.fixture(scope="module")
def rows():
    return list(azure_prices.parse(page(seed_items()), page=1, snapshot_id="s", observed_at=NOW))


def _one(rows, **kw):
    found = [r for r in rows if all(r[k] == v for k, v in kw.items())]
    assert len(found) == 1, (kw, len(found))
    return found[0]


def test_classification(rows):
    sku = "Standard_ND96isr_H100_v5"
    assert _one(rows, arm_sku_name=sku, arm_region_name="eastus2", os="linux",
                offer="on_demand")["retail_price"] == 98.32
    assert _one(rows, arm_sku_name=sku, os="windows")["retail_price"] == 102.0
    assert _one(rows, arm_sku_name=sku, offer="spot")["retail_price"] == 39.33
    assert _one(rows, arm_sku_name=sku, offer="low_priority")["retail_price"] == 19.66
    assert _one(rows, arm_sku_name=sku, offer="dev_test")["price_type"] == "DevTestConsumption"


def test_reservations_are_normalised_to_hours_and_keep_the_term_price(rows):
    one = _one(rows, offer="reservation", reservation_term="1 Year")
    assert one["retail_price"] == 602853.0
    assert one["hourly_price"] == pytest.approx(602853.0 / 8760)
    three = _one(rows, offer="reservation", reservation_term="3 Years")
    assert three["hourly_price"] == pytest.approx(1291968.0 / 26280)


def test_savings_plan_kept_as_published(rows):
    r = _one(rows, arm_sku_name="Standard_ND96isr_H100_v5", arm_region_name="eastus2",
             offer="on_demand", os="linux")
    assert json.loads(r["savings_plan"])[0]["term"] == "1 Year"
    assert r["evidence"] == "list_price" and r["first_seen_at"] == NOW


def test_price_key_ignores_price_but_not_identity(rows):
    keys = [r["price_key"] for r in rows]
    assert len(set(keys)) == len(keys)
    item = dict(seed_items()[0])
    changed = dict(item, retailPrice=1.0)
    assert azure_prices.price_key(item) == azure_prices.price_key(changed)
    assert azure_prices.price_key(item) != azure_prices.price_key(dict(item, armRegionName="x"))


@pytest.mark.parametrize(("product", "os"), [
    ("Virtual Machines NCCadsv5 Srs Win", "windows"),  # Azure's abbreviated Windows product
    ("Virtual Machines NCCadsv5 Srs", "linux"),
    ("Virtual Machines ND Series Windows", "windows"),
    ("Virtual Machines NCads H100 v5 Series", "linux"),
    ("Virtual Machines ND Series Winter", "unknown"),  # a last word naming no OS: not guessed
    ("Virtual Machines NC Series Promo", "unknown"),
])
def test_the_os_is_the_product_name_s_last_word(product, os):
    item = {**seed_items()[0], "productName": product}
    [row] = azure_prices.parse(page([item]), page=1, snapshot_id="s", observed_at=NOW)
    assert row["os"] == os


def test_an_unknown_os_word_is_reported_and_never_priced_by_default(server, tmp_path):
    from ingest.refresh import refresh
    from tests.conftest import azure_table, make_settings, mount_azure, write_sources

    items = seed_items()
    items.append({**items[0], "meterId": "m-odd", "skuId": "s-odd",
                  "productName": "Virtual Machines ND Series Promo"})
    mount_azure(server, items=items)
    report = refresh(make_settings(tmp_path, write_sources(tmp_path / "sources.toml",
                                                           azure_prices=azure_table(server))))
    [outcome] = [s for s in report.sources if s.source == "azure_prices"]
    assert outcome.details["unknown_os_products"] == ["Virtual Machines ND Series Promo"]
    assert any("Virtual Machines ND Series Promo" in w for w in outcome.warnings)


@pytest.mark.parametrize("bad, reason", [
    ({"retailPrice": "NaN"}, "not a finite number"),
    ({"retailPrice": "1e309"}, "not a finite number"),
    ({"retailPrice": "cheap"}, "could not convert"),
    ({"meterId": None}, "missing meterId"),
    ({"effectiveStartDate": "yesterday"}, "Invalid isoformat"),
])
def test_malformed_item_names_page_and_item(bad, reason):
    items = seed_items()[:3]
    items[2] = {**items[2], **bad}
    with pytest.raises(ParseError) as e:
        list(azure_prices.parse(page(items), page=7, snapshot_id="s", observed_at=NOW))
    assert "page 7, item 2" in str(e.value) and reason in str(e.value)


def test_page_that_is_not_json():
    raw = Raw(source="azure_prices", url="x", body=b"<html>", fetched_at=NOW)
    with pytest.raises(ParseError, match="page 3: the JSON is malformed"):
        list(azure_prices.parse(raw, page=3, snapshot_id="s", observed_at=NOW))


def test_default_filter_selects_gpu_vms_only():
    f = azure_fetch.build_filter(
        "serviceName eq 'Virtual Machines' and startswith(armSkuName, 'Standard_N')", ["eastus2"])
    picked = {i["armSkuName"] for i in seed_items() if matches(i, f)}
    assert "Standard_D4s_v5" not in picked and "Standard_ND96isr_H100_v5" in picked
    assert all(i["armRegionName"] == "eastus2" for i in seed_items() if matches(i, f))


@given(st.floats(min_value=0, max_value=1e7, allow_nan=False),
       st.sampled_from(["1 Year", "3 Years", "5 Years"]))
def test_reservation_hourly_times_hours_gives_term_price(price, term):
    item = {**seed_items()[6], "retailPrice": price, "unitPrice": price, "reservationTerm": term}
    [row] = azure_prices.parse(page([item]), page=1, snapshot_id="s", observed_at=NOW)
    assert row["hourly_price"] * HOURS_IN_TERM[term] == pytest.approx(price)


# ---- fetching pages ahead: the pages read are the ones a one-by-one walk reads

def _walk(server, path: str, concurrency: int, walk: dict | None = None) -> list[bytes]:
    from ingest.http import make_client

    with make_client(10) as client:
        return [r.body for r in azure_fetch.fetch_pages(
            client, server.url(path), api_version="v", odata_filter="serviceName eq 'Virtual Machines'",
            currency="USD", concurrency=concurrency, walk=walk)]


class _Slow:
    """A handler that answers after ``seconds``: pages that wait on the network, as the real
    API's do, so the walk decides to fetch ahead. Counts the most requests in flight at once."""

    def __init__(self, handler, seconds: float = 0.02) -> None:
        import threading

        self.handler, self.seconds = handler, seconds
        self.lock, self.now, self.most = threading.Lock(), 0, 0

    def __call__(self, req):
        import time

        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(self.seconds)
            return self.handler(req)
        finally:
            with self.lock:
                self.now -= 1


def test_pages_fetched_ahead_are_the_pages_read_one_by_one(server):
    from tests.azure_emulator import AzureEmulator, generate_items

    emulator = AzureEmulator(generate_items(253), base_url=server.url("/prices"), page_size=10)
    server.handlers["/prices"] = slow = _Slow(emulator)
    one_by_one = _walk(server, "/prices", 1)
    assert len(one_by_one) == 26 and len(emulator.requests) == 26 and slow.most == 1
    emulator.requests.clear()
    walk: dict = {}
    assert _walk(server, "/prices", 4, walk) == one_by_one
    assert walk["fetch_ahead"] is True and walk["waiting_share"] > 0.5
    assert 1 < slow.most <= 4
    # at most the window's worth of requests past the last page
    assert 26 <= len(emulator.requests) <= 26 + 4


def test_links_that_are_not_skip_counts_are_followed_one_by_one(server):
    from tests.helpers import Reply

    def opaque(req):  # a server paging by token: nothing to predict
        n = int(dict(p.split("=") for p in req.query.split("&") if "=" in p).get("token", "0"))
        nxt = server.url(f"/opaque?token={n + 1}") if n < 4 else None
        return Reply(200, json.dumps({"Items": [{"n": n}] * 50, "NextPageLink": nxt}).encode())

    def lying(req):  # $skip in the link, but not the number of items read so far
        skip = int(dict(p.split("=") for p in req.query.split("&") if "=" in p).get("$skip", "0"))
        nxt = server.url(f"/lying?$skip={skip + 7}") if skip < 28 else None
        return Reply(200, json.dumps({"Items": [{"s": skip}] * 5, "NextPageLink": nxt}).encode())

    server.handlers["/opaque"] = _Slow(opaque)
    server.handlers["/lying"] = _Slow(lying)
    bodies = _walk(server, "/opaque", 4)
    assert [json.loads(b)["Items"][0]["n"] for b in bodies] == [0, 1, 2, 3, 4]
    assert len(server.hits("/opaque")) == 5
    bodies = _walk(server, "/lying", 4)
    assert [json.loads(b)["Items"][0]["s"] for b in bodies] == [0, 7, 14, 21, 28]
    assert len(server.hits("/lying")) == 5


def test_the_next_link_is_the_page_s_own_never_one_inside_an_item(server):
    """Links are read from a page's end when they can be; a ``NextPageLink`` inside an item
    (last on the page), or quoted inside a string, is never taken for the page's own."""
    from tests.helpers import Reply

    decoy = server.url("/decoy")

    def tricky(req):
        n = int(dict(p.split("=") for p in req.query.split("&") if "=" in p).get("n", "0"))
        own = json.dumps(server.url(f"/tricky?n={n + 1}") if n < 3 else None)
        if n % 2 == 0:  # the page's link first, an item carrying a link of its own last
            body = (f'{{"NextPageLink": {own}, "Items": [{{"k": {n}}}, '
                    f'{{"NextPageLink": "{decoy}", "Count": 1}}], "Count": 2}}')
        else:  # the usual layout, with the link's text quoted inside an item
            quoted = json.dumps(f'"NextPageLink": "{decoy}", "Count": 1}}')
            body = f'{{"Items": [{{"k": {n}, "note": {quoted}}}], "NextPageLink": {own}, "Count": 1}}'
        return Reply(200, body.encode())

    server.handlers["/tricky"] = _Slow(tricky)
    for concurrency in (1, 4):
        bodies = _walk(server, "/tricky", concurrency)
        assert [json.loads(b)["Items"][0]["k"] for b in bodies] == [0, 1, 2, 3]
    assert not server.hits("/decoy")
