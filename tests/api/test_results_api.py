"""The results API over a real published snapshot: filters, pagination, formats, errors."""

from __future__ import annotations

import csv
import io

import pytest

from tests.helpers import SUMMARY_CSV


@pytest.fixture
def client(full_client):
    return full_client


def test_filters_combine(client):
    body = client.get("/v1/results", params={"division": "all", "availability": "all", "model": "deepseek-r1", "scenario": "interactive",
                                             "organization": "NVIDIA"}).json()
    platforms = {r["platform"]: r["result"] for r in body["rows"]}
    assert platforms["GB200-NVL72_GB200-186GB_aarch64x72_TRT"] == 240274.0
    assert platforms["GB300-NVL72_GB300-288GB_aarch64x72_TRT"] == 253506.0
    assert body["total"] == len(body["rows"]) == 3


def test_model_spellings_meet(client):
    a = client.get("/v1/results?division=all&availability=all&model=llama3_1-8b&limit=1").json()["total"]
    b = client.get("/v1/results?division=all&availability=all&model=llama3.1-8b&limit=1").json()["total"]
    assert a == b == 77


def test_repeated_and_comma_lists(client):
    one = client.get("/v1/results?division=all&availability=all&scenario=Offline&scenario=Server&limit=1").json()["total"]
    two = client.get("/v1/results?division=all&availability=all&scenario=Offline,Server&limit=1").json()["total"]
    assert one == two == 239 + 178


def test_pagination_walks_every_row_once(client):
    seen, url = [], "/v1/results?division=all&availability=all&limit=100&sort=-result"
    while url:
        body = client.get(url).json()
        seen += [r["id"] for r in body["rows"]]
        url = body["next"]
    assert len(seen) == len(set(seen)) == 492


@pytest.mark.parametrize("limit,offset", [(100, 0), (500, 0), (492, 0), (491, 1), (100, 400),
                                          (100, 492), (7, 1000), (1, 491)])
def test_total_is_the_full_count_whatever_the_page(client, limit, offset):
    """The total comes from the page when it is not full, else from a count: same answer."""
    body = client.get(f"/v1/results?division=all&availability=all&limit={limit}&offset={offset}").json()
    assert body["total"] == 492
    assert len(body["rows"]) == max(0, min(limit, 492 - offset))
    filtered = client.get(f"/v1/results?division=all&availability=all&model=deepseek-r1&limit={limit}&offset={offset}").json()
    everything = client.get("/v1/results?division=all&availability=all&model=deepseek-r1&limit=1000").json()["rows"]
    assert filtered["total"] == len(everything)


def test_sort_and_columns(client):
    body = client.get("/v1/results?division=all&availability=all&model=llama2-70b-99.9&scenario=Offline&sort=-result"
                      "&columns=organization,result&limit=3").json()
    results = [r["result"] for r in body["rows"]]
    assert results == sorted(results, reverse=True)
    assert set(body["rows"][0]) == {"organization", "result"}


def test_system_substring_and_range(client):
    with SUMMARY_CSV.open(newline="") as f:
        expected = sorted(float(r["Result"]) for r in csv.DictReader(f)
                          if "gb300" in r["SystemName"].lower()
                          and 600000 <= float(r["Result"]) <= 700000)
    body = client.get("/v1/results?division=all&availability=all&system=gb300&min_result=600000&max_result=700000"
                      "&sort=result").json()
    assert [r["result"] for r in body["rows"]] == expected and 679740.0 in expected


def test_accelerator_filter_accepts_published_name(client):
    """A published spelling matches whatever its case (v6.1 has both Nvidia and NVIDIA)."""
    rows = client.get("/v1/results", params={"division": "all", "availability": "all", "limit": 1000}).json()["rows"]
    expected = sum(r["accelerator_model_name"] is not None
                   and r["accelerator_model_name"].lower() == "nvidia b300-sxm-270gb" for r in rows)
    assert expected > 4  # 4 spelled "Nvidia …", the rest "NVIDIA …"
    body = client.get("/v1/results", params={"division": "all", "availability": "all", "accelerator": "Nvidia B300-SXM-270GB"}).json()
    assert body["total"] == expected


def test_csv_matches_json(client):
    params = "model=deepseek-r1&sort=result"
    rows = client.get(f"/v1/results?division=all&availability=all&{params}&limit=1000").json()["rows"]
    r = client.get(f"/v1/results?division=all&availability=all&{params}&limit=1000&format=csv")
    assert r.headers["content-type"].startswith("text/csv")
    parsed = list(csv.DictReader(io.StringIO(r.text)))
    assert [p["id"] for p in parsed] == [x["id"] for x in rows]
    assert [float(p["result"]) for p in parsed] == [x["result"] for x in rows]
    via_accept = client.get(f"/v1/results?division=all&availability=all&{params}&limit=1000", headers={"Accept": "text/csv"})
    assert via_accept.text == r.text


def test_unknown_filter_value_is_empty_not_error(client):
    body = client.get("/v1/results?division=all&availability=all&organization=Nobody").json()
    assert body["total"] == 0 and body["rows"] == []


@pytest.mark.parametrize("query, param", [
    ("limit=0", "limit"), ("limit=100000", "limit"), ("offset=-1", "offset"),
    ("scenario=Warp", "scenario"), ("availability=maybe", "availability"),
    ("sort=nonsense", "sort"), ("columns=nope", "columns"), ("min_result=abc", "min_result"),
    ("format=xml", "format"),
])
def test_invalid_parameters_get_one_error_shape(client, query, param):
    r = client.get(f"/v1/results?{query}")
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["status"] == 422 and err["code"] == "invalid_parameter"
    assert err["param"] == param and err["message"]


def test_one_result_with_its_source(client):
    row = client.get("/v1/results?division=all&availability=all&model=deepseek-r1&scenario=Interactive&system=GB200").json()[
        "rows"][0]
    body = client.get(f"/v1/results/{row['id']}").json()
    assert body["row"]["result"] == 240274.0
    assert body["source"]["sha256"] == row["source_sha256"]
    assert body["source"]["rows"]["mlperf_result"] == 492
    assert client.get(body["links"]["source"]).json()["row"]["id"] == row["source_snapshot_id"]


def test_404_uses_the_error_shape(client):
    r = client.get("/v1/results/doesnotexist")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = client.get("/v1/nothing-here")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_api_is_read_only(client):
    for method in ("post", "put", "delete", "patch"):
        r = getattr(client, method)("/v1/results")
        assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_etag_round_trip(client):
    r = client.get("/v1/results?division=all&availability=all&model=deepseek-r1")
    etag = r.headers["etag"]
    assert r.headers["cache-control"].startswith("public, max-age=")
    assert "last-modified" in r.headers
    again = client.get("/v1/results?division=all&availability=all&model=deepseek-r1", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    other = client.get("/v1/results?division=all&availability=all&model=llama2-70b-99.9", headers={"If-None-Match": etag})
    assert other.status_code == 200


def test_healthz_names_snapshot_and_sources(client):
    body = client.get("/healthz").json()
    assert body["status"] == "ok" and body["snapshot_id"]
    assert {s["source"]: s["state"] for s in body["sources"]} == {
        "azure_prices": "fresh", "curated": "fresh", "mlperf": "fresh", "mlperf_rules": "fresh",
        "inferencex": "disabled", "cloud_prices": "disabled"}  # off unless enabled
    assert not any(s["stale"] for s in body["sources"])


def test_cors_off_by_default_and_configurable(full_copy, client_for):
    from tests.conftest import make_settings

    tmp, sources = full_copy
    plain = client_for(make_settings(tmp, sources))
    r = plain.get("/v1/meta", headers={"Origin": "https://dash.example"})
    assert "access-control-allow-origin" not in r.headers
    allowed = client_for(make_settings(tmp, sources, api_cors_origins=["https://dash.example"]))
    r = allowed.get("/v1/meta", headers={"Origin": "https://dash.example"})
    assert r.headers["access-control-allow-origin"] == "https://dash.example"
    assert "etag" in r.headers["access-control-expose-headers"].lower()


def test_huge_offset_is_a_422_not_a_500(client):
    r = client.get("/v1/hardware?offset=9223372036854775808")
    assert r.status_code == 422 and r.json()["error"]["param"] == "offset"


def test_a_snapshot_published_before_revisions_were_kept_serves_its_items(full_copy,
                                                                         client_for):
    """A snapshot without mlperf_result_revision (published by an earlier version) answered
    /v1/results/{id}, /v1/sources/{id} and /v1/claims/{id} with a 500: the row counts per fact
    table named the table it lacks."""
    import json

    import duckdb

    from tests.conftest import make_settings

    tmp, sources = full_copy
    current = json.loads((tmp / "var" / "CURRENT").read_text())
    with duckdb.connect(str(tmp / "var" / "snapshots" / current["file"])) as con:
        con.execute("DROP TABLE mlperf_result_revision")
    client = client_for(make_settings(tmp, sources))
    row = client.get("/v1/results?limit=1").json()["rows"][0]
    item = client.get(f"/v1/results/{row['id']}")
    assert item.status_code == 200 and item.json()["history"] == []
    source = client.get(f"/v1/sources/{row['source_snapshot_id']}")
    assert source.status_code == 200
    assert source.json()["row"]["rows"]["mlperf_result_revision"] == 0
    assert source.json()["row"]["rows"]["mlperf_result"] > 0
    claim = client.get("/v1/claims").json()["rows"][0]
    assert client.get(f"/v1/claims/{claim['id']}").status_code == 200
