"""API conventions a dashboard, a proxy and an analyst rely on: unknown parameters refused
with a suggestion, filters that forgive case and round spelling, weak ETags and
If-Modified-Since, HEAD, gzip, and a Link header on every paged format."""

from __future__ import annotations

import gzip

import pytest


@pytest.mark.parametrize("url, name, suggestion", [
    ("/v1/results?model_family=llama2-70b", "model_family", "model"),
    ("/v1/ratios?scenarios=Server", "scenarios", "scenario"),
    ("/v1/costs?rates=10", "rates", "rate"),
    ("/healthz?verbose=1", "verbose", None),
])
def test_an_unknown_parameter_is_a_422_naming_it_and_the_accepted_ones(full_client, url, name,
                                                                      suggestion):
    r = full_client.get(url)
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["param"] == name and f"unknown parameter {name!r}" in error["message"]
    if suggestion:
        assert f"did you mean {suggestion!r}?" in error["message"]
        assert "accepted: " in error["message"] and suggestion in error["message"]


def test_list_errors_name_the_parameter_not_its_position(full_client):
    r = full_client.get("/v1/costs?rate=10&rate=cheap")
    assert r.status_code == 422 and r.json()["error"]["param"] == "rate"


def test_filters_forgive_case_and_round_spelling(full_client):
    exact = full_client.get("/v1/results?organization=NVIDIA&limit=1000").json()["total"]
    assert exact > 0
    assert full_client.get("/v1/results?organization=nvidia&limit=1").json()["total"] == exact
    v61 = full_client.get("/v1/results?round=v6.1&limit=1").json()["total"]
    assert v61 == 492 == full_client.get("/v1/results?round=6.1&limit=1").json()["total"]
    assert full_client.get("/v1/results?round=V6.1&limit=1").json()["total"] == 492
    eastus2 = full_client.get("/v1/prices?region=eastus2&limit=1").json()["total"]
    assert eastus2 > 0 and full_client.get("/v1/prices?region=EastUS2&limit=1").json()["total"] \
        == eastus2
    by_id = full_client.get("/v1/results?accelerator=nvidia-gb200&limit=1").json()["total"]
    assert by_id > 0
    assert full_client.get("/v1/results?accelerator=NVIDIA-GB200&limit=1").json()["total"] == by_id
    assert full_client.get("/v1/claims?vendor=cerebras&limit=1").json()["total"] == \
        full_client.get("/v1/claims?vendor=Cerebras&limit=1").json()["total"] > 0


def test_weak_etags_and_if_modified_since_revalidate(full_client):
    first = full_client.get("/v1/results?limit=3")
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    big = full_client.get("/v1/results?limit=200", headers={"Accept-Encoding": "gzip"})
    assert big.headers["vary"] == "Accept, Accept-Encoding"  # once each
    assert "Accept" in first.headers["vary"].split(", ")
    assert full_client.get("/v1/results?limit=3", headers={"If-None-Match": f"W/{etag}"}) \
        .status_code == 304
    assert full_client.get("/v1/results?limit=3", headers={"If-None-Match": '"other"'}) \
        .status_code == 200
    assert full_client.get("/v1/results?limit=3", headers={"If-Modified-Since": modified}) \
        .status_code == 304
    older = "Mon, 01 Jan 2001 00:00:00 GMT"
    assert full_client.get("/v1/results?limit=3", headers={"If-Modified-Since": older}) \
        .status_code == 200


def test_head_answers_every_get_route_with_headers_only(full_client):
    for path in ("/v1/results?limit=2", "/v1/meta", "/healthz", "/v1/calc/grid"):
        got = full_client.get(path)
        head = full_client.head(path)
        assert head.status_code == 200 and head.content == b""
        assert head.headers["etag"] == got.headers["etag"]


def test_gzip_when_asked_and_a_link_header_on_csv_pages(full_client):
    r = full_client.get("/v1/results?limit=200", headers={"Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip" and r.json()["rows"]
    plain = full_client.get("/v1/results?limit=200", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert gzip.compress(plain.content) and len(plain.content) > 1024
    page = full_client.get("/v1/results?format=csv&limit=10")
    link = page.headers["link"]
    assert link.endswith('>; rel="next"') and "offset=10" in link and "format=csv" in link
    last = full_client.get("/v1/results?format=csv&limit=10&offset=490")
    assert "link" not in last.headers


def test_a_cost_row_names_the_price_it_used(full_client):
    rows = full_client.get("/v1/costs?basis=list_price&price_status=priced&limit=1000").json()["rows"]
    assert rows
    prices = {p["id"]: p for p in full_client.get("/v1/prices?limit=1000").json()["rows"]}
    for r in rows:
        price = prices[r["price_id"]]
        assert (r["region"], r["offer"], r["os"], r["sku"]) == (
            price["arm_region_name"], price["offer"], price["os"], price["arm_sku_name"])
        assert r["reservation_term"] == price["reservation_term"]
        assert r["price_valid_from"] == price["valid_from"]
        assert r["rate_per_accelerator_hour"] == pytest.approx(price["price_per_accelerator_hour"])
    assumed = full_client.get("/v1/costs?basis=assumed&rate=10&limit=1").json()["rows"][0]
    assert assumed["offer"] is None and assumed["price_id"] is None


@pytest.mark.parametrize("param", ["offer", "os"])
def test_an_empty_single_choice_is_a_422_not_a_500(full_client, param):
    """Found by Schemathesis: offer= (empty) used to reach an empty list and fail with 500."""
    r = full_client.get(f"/v1/costs?{param}=")
    assert r.status_code == 422 and r.json()["error"]["param"] == param
