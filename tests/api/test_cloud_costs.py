"""/v1/costs on every provider's list prices (#45): per provider, cheapest and median, from the
carried SkyPilot catalog samples and the recorded Azure API items; per-accelerator assumed
rates. Expected rates are read off the samples' CSV lines by hand."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from tests.conftest import make_settings
from tests.helpers import copy_data_dir

EVERYTHING = {"division": "all", "availability": "all", "limit": 1000}


@pytest.fixture(scope="module")
def client(all_sources_warehouse, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cloud_costs")
    copy_data_dir(all_sources_warehouse / "var", tmp / "var")
    c = TestClient(create_app(make_settings(tmp, all_sources_warehouse / "sources.toml")))
    yield c
    c.app.state.reader.close()
    c.close()


def cost(rate: float, result: dict) -> float:
    """rate x accelerators / (tokens/s x 3600) x 1e6, from the result's own figures."""
    return rate * result["total_accelerators"] / (result["result"] * 3600) * 1e6


def test_each_provider_the_cheapest_and_the_median(client):
    rows = client.get("/v1/costs", params={
        **EVERYTHING, "basis": "list_price", "provider": "all", "accelerator": "nvidia-h200",
        "scenario": "Offline"}).json()["rows"]
    assert rows
    result = client.get(f"/v1/results/{rows[0]['result_id']}").json()["row"]
    by = {r["provider"]: r for r in rows if r["result_id"] == result["id"]}
    # vast: 8x-H200 at 17.88/h (France) = 2.235 per GPU-hour, under 5.18/2 and 2.65/1;
    # azure (its API): ND96isr H200 v5 at 84.80/h in eastus2 = 10.60; median of the two
    assert set(by) == {"vast", "azure", "cheapest", "median"}
    assert (by["vast"]["rate_per_accelerator_hour"], by["vast"]["region"], by["vast"]["sku"]) \
        == (pytest.approx(2.235), "France, FR, EU", "8x-H200-32-65536")
    assert by["azure"]["rate_per_accelerator_hour"] == pytest.approx(10.6)
    assert by["cheapest"]["sku"] == "8x-H200-32-65536"
    assert by["median"]["rate_per_accelerator_hour"] == pytest.approx((2.235 + 10.6) / 2)
    for r in by.values():
        assert r["cost_per_million_tokens"] == pytest.approx(
            cost(r["rate_per_accelerator_hour"], result))
        assert r["price_basis"] == "list_price" and r["basis"] == "derived: measured + list_price"


def test_spot_and_one_named_provider(client):
    rows = client.get("/v1/costs", params={
        **EVERYTHING, "basis": "list_price", "provider": "gcp", "offer": "spot"}).json()
    assert rows["total"] == 0  # no result on a TPU in the round; gcp's rows are TPUs only
    b200 = client.get("/v1/costs", params={
        **EVERYTHING, "basis": "list_price", "provider": "vast",
        "accelerator": "nvidia-b200-sxm-180gb"}).json()["rows"]
    # vast's B200: 18.82/h for 4 and 9.41/h for 2, both 4.705 per GPU-hour
    assert b200 and {(r["provider"], round(r["rate_per_accelerator_hour"], 6)) for r in b200} \
        == {("vast", 4.705)}


def test_an_unknown_provider_is_explained(client):
    body = client.get("/v1/costs", params={"basis": "list_price", "provider": "nosuch"}).json()
    assert body["total"] == 0 and "no provider 'nosuch' in this snapshot" in body["hint"]


def test_assumed_rates_per_accelerator_beside_a_flat_rate(client):
    rows = client.get("/v1/costs", params={
        **EVERYTHING, "basis": "assumed", "model": "llama2-70b", "scenario": "Offline",
        "rate": "nvidia-b200-sxm-180gb:6,amd-mi355x:4,10"}).json()["rows"]
    b200 = [r for r in rows if r["accelerator_id"] == "nvidia-b200-sxm-180gb"]
    mi355x = [r for r in rows if r["accelerator_id"] == "amd-mi355x"]
    others = [r for r in rows if r["accelerator_id"] not in
              ("nvidia-b200-sxm-180gb", "amd-mi355x")]
    assert {r["rate_per_accelerator_hour"] for r in b200} == {6.0, 10.0}
    assert {r["rate_per_accelerator_hour"] for r in mi355x} == {4.0, 10.0}
    assert others and {r["rate_per_accelerator_hour"] for r in others} == {10.0}
    one = next(r for r in mi355x if r["rate_per_accelerator_hour"] == 4.0)
    result = client.get(f"/v1/results/{one['result_id']}").json()["row"]
    assert one["cost_per_million_tokens"] == pytest.approx(cost(4.0, result))
    assert one["basis"] == "derived: measured + assumption"


@pytest.mark.parametrize("rate", ["nvidia-b200-sxm-180gb:x", ":5", "0", "b200:-1"])
def test_a_bad_rate_is_a_422_naming_it(client, rate):
    r = client.get("/v1/costs", params={"rate": rate, "basis": "assumed"})
    assert r.status_code == 422 and repr(rate) in r.json()["error"]["message"]


def test_prices_cover_every_provider_with_the_same_filters(client):
    h200 = client.get("/v1/prices", params={"accelerator": "nvidia-h200", "offer": "on_demand",
                                            "limit": 100}).json()["rows"]
    by = {(r["provider"], r["arm_sku_name"], r["arm_region_name"]): r for r in h200}
    # the Azure API's ND96isr H200 v5 and vast's three H200 offers of the sample
    assert set(by) == {("azure", "Standard_ND96isr_H200_v5", "eastus2"),
                       ("vast", "1x-H200-32-65536", "France, FR, EU"),
                       ("vast", "2x-H200-32-65536", "Michigan, US, NA"),
                       ("vast", "8x-H200-32-65536", "France, FR, EU")}
    vast8 = by[("vast", "8x-H200-32-65536", "France, FR, EU")]
    assert (vast8["price_per_accelerator_hour"], vast8["price_source"], vast8["meter_id"],
            vast8["evidence"]) == (pytest.approx(17.88 / 8), "cloud_prices", None, "list_price")
    assert vast8["source_snapshot_url"].endswith(
        "/01b8cdda287814b30ff0acb49746cca19fbd4355/catalogs/v8/vast/vms.csv")
    gcp = client.get("/v1/prices", params={"provider": "gcp", "region": "us-central1",
                                           "limit": 100}).json()["rows"]
    assert gcp and {r["provider"] for r in gcp} == {"gcp"}
    assert {r["zone"] for r in gcp} == {"us-central1-a", "us-central1-b"}
    body = client.get("/v1/prices", params={"provider": "nosuch"}).json()
    assert body["total"] == 0 and "no provider 'nosuch'" in body["hint"]


def test_the_frontier_prices_each_point_on_the_cheapest_provider(client):
    rows = client.get("/v1/frontier", params={"model": "deepseek-r1", "isl": 1024, "osl": 1024,
                                              "provider": "cheapest", "limit": 1000}).json()["rows"]
    # cheapest per GPU-hour in the snapshot: vast's H200 17.88/8, its H100 SXM 1.87/1 (under
    # 16.00/8 and Azure's 98.32/8); Azure's API alone rents the MI300X (88.00/8)
    expected = {"nvidia-h200": (17.88 / 8, "vast: 8x-H200-32-65536"),
                "nvidia-h100-sxm": (1.87, "vast: 1x-H100_SXM-32-65536"),
                "amd-mi300x": (11.0, "azure: Standard_ND96isr_MI300X_v5")}
    seen = set()
    for r in rows:
        if r["accelerator_id"] not in expected or r["kind"] != "frontier":
            continue
        rate, sku = expected[r["accelerator_id"]]
        assert (r["list_price_per_accelerator_hour"], r["list_price_sku"]) == \
            (pytest.approx(rate), sku)
        assert r["list_price_cost_per_million_tokens"] == pytest.approx(
            rate / (r["output_tput_per_gpu"] * 3600) * 1e6)
        seen.add(r["accelerator_id"])
    assert seen == set(expected)
    azure = client.get("/v1/frontier", params={"model": "deepseek-r1", "isl": 1024,
                                               "osl": 1024, "limit": 1000}).json()["rows"]
    # without a provider: Azure's eastus2 prices, as before (vast's offers play no part)
    assert {r["list_price_sku"] for r in azure if r["accelerator_id"] == "nvidia-h200"} == \
        {"Standard_ND96isr_H200_v5"}


def test_a_price_source_filter_keeps_azures_own_prices_apart(client):
    both = client.get("/v1/prices/history", params={
        "sku": "Standard_ND96isr_H100_v5", "region": "eastus2", "offer": "on_demand",
        "os": "linux"}).json()["rows"]
    # the Azure API's 98.32 and the catalog's own row for the same SKU (98.32 too)
    assert sorted(r["price_source"] for r in both) == ["azure_prices", "cloud_prices"]
    own = client.get("/v1/prices/history", params={
        "sku": "Standard_ND96isr_H100_v5", "region": "eastus2", "offer": "on_demand",
        "os": "linux", "source": "azure_prices"}).json()["rows"]
    assert [(r["price_source"], r["retail_price"]) for r in own] == [("azure_prices", 98.32)]
    listed = client.get("/v1/prices", params={"source": "cloud_prices", "limit": 1000}).json()
    assert listed["total"] and {r["price_source"] for r in listed["rows"]} == {"cloud_prices"}
    bad = client.get("/v1/prices", params={"source": "elsewhere"})
    assert bad.status_code == 422 and "azure_prices, cloud_prices" in bad.json()["error"]["message"]
