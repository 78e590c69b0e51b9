"""Cite as the publishers ask (issue #37 item 5), over a warehouse of every carried source:
MLPerf rows carry the result ID and details link of their source file (read here from the
carried files themselves), every figure derived from MLPerf results carries MLCommons' notice in
every format, and InferenceX rows carry their run URL and attribution."""

from __future__ import annotations

import csv
import gzip
import io
import json
import tomllib
from urllib.parse import quote

import pyarrow.parquet as pq
import pytest

from tests.conftest import private_client
from tests.helpers import CASES
from warehouse.model.vocabulary import INFERENCEX_ATTRIBUTION, MLPERF_DERIVED_NOTICE

MLPERF = CASES / "mlperf"
# The routes whose rows are computed from MLPerf results.
DERIVED_ROUTES = ["/v1/per-accelerator", "/v1/ratios", "/v1/costs", "/v1/energy", "/v1/trends",
                  "/v1/latency-bounds", "/v1/claim-checks"]
EVERYTHING = {"division": "all", "availability": "all"}


@pytest.fixture(scope="module")
def client(all_sources_warehouse, tmp_path_factory):
    with private_client(all_sources_warehouse, tmp_path_factory.mktemp("citation")) as c:
        yield c


def all_rows(client, url: str, **params) -> list[dict]:
    body = client.get(url, params={"limit": 1000, **params}).json()
    out = body["rows"]
    while body["next"]:
        body = client.get(body["next"]).json()
        out += body["rows"]
    return out


def params_for(route: str) -> dict:
    return {} if route == "/v1/claim-checks" else EVERYTHING


def test_the_notice_says_what_mlcommons_asks():
    assert "Derived from MLPerf Inference results" in MLPERF_DERIVED_NOTICE
    assert "not verified by MLCommons" in MLPERF_DERIVED_NOTICE


@pytest.mark.parametrize("route", DERIVED_ROUTES)
def test_every_derived_row_carries_the_notice_in_json(client, route):
    rows = all_rows(client, route, **params_for(route))
    assert rows, route
    assert {r["notice"] for r in rows} == {MLPERF_DERIVED_NOTICE}


@pytest.mark.parametrize("route", DERIVED_ROUTES)
def test_every_derived_row_carries_the_notice_in_csv_ndjson_and_parquet(client, route):
    asked = {"limit": 1000, **params_for(route)}
    r = client.get(route, params={**asked, "format": "csv"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert rows and {row["notice"] for row in rows} == {MLPERF_DERIVED_NOTICE}
    r = client.get(route, params={**asked, "format": "ndjson"})
    lines = [json.loads(line) for line in r.text.splitlines() if line]
    assert lines and {row["notice"] for row in lines} == {MLPERF_DERIVED_NOTICE}
    r = client.get(route, params={**asked, "format": "parquet"})
    table = pq.read_table(io.BytesIO(r.content))
    assert table.num_rows and set(table.column("notice").to_pylist()) == {MLPERF_DERIVED_NOTICE}


def test_the_notice_stays_when_columns_are_picked_with_it(client):
    r = client.get("/v1/ratios", params={**EVERYTHING, "columns": "ratio,notice",
                                         "format": "csv", "limit": 5})
    assert r.text.splitlines()[0] == "ratio,notice"


@pytest.fixture(scope="module")
def v51_records() -> dict[tuple, tuple[str, str]]:
    """(division, submitter, platform, submitted model, scenario) -> (ID, Details), read here
    from the carried v5.1 summary_results.json."""
    records = json.loads(gzip.decompress(
        (MLPERF / "inference_results_v5.1" / "summary_results.json.gz").read_bytes()))
    out: dict[tuple, tuple[str, str]] = {}
    for rec in records:
        key = (rec["Category"], rec["Submitter"], rec["Platform"], rec["UsedModel"],
               rec["Scenario"])
        assert key not in out
        out[key] = (rec["ID"], rec["Details"])
    return out


@pytest.fixture(scope="module")
def results(client) -> list[dict]:
    return all_rows(client, "/v1/results", **EVERYTHING)


def test_every_v51_row_carries_the_result_id_and_details_link_of_its_record(results,
                                                                            v51_records):
    rows = [r for r in results if r["round"] == "v5.1"]
    assert len(rows) >= len(v51_records)  # power rows share their record's ID
    seen = set()
    for r in rows:
        key = (r["division"], r["organization"], r["platform"], r["model"], r["scenario_raw"])
        assert (r["system_id"], r["details_url"]) == v51_records[key], key
        seen.add(key)
    assert seen == set(v51_records)


def test_every_v61_csv_row_links_its_location_at_the_pinned_commit(results):
    pins = {f["path"]: f for f in tomllib.loads((MLPERF / "PROVENANCE.toml").read_text())["file"]}
    pin = pins["inference_results_v6.1/summary.csv.gz"]
    text = gzip.decompress((MLPERF / pin["path"]).read_bytes()).decode("utf-8-sig")
    expected = {}
    for rec in csv.DictReader(io.StringIO(text)):
        key = (rec["Division"], rec["Organization"], rec["Platform"], rec["Model"],
               rec["Scenario"], rec["Units"])
        location = quote(rec["Location"].removeprefix("./"))  # "Orrick Industries LLC"
        expected[key] = (f"https://github.com/{pin['repository']}/tree/{pin['commit']}/"
                         f"{location}")
    rows = [r for r in results if r["round"] == "v6.1"]
    assert len(rows) == len(expected) == 492
    for r in rows:
        key = (r["division"], r["organization"], r["platform"], r["model"], r["scenario_raw"],
               r["units"])
        assert r["details_url"] == expected[key], key
        assert r["system_id"] is None  # summary.csv publishes no result ID
    assert all("/closed/" in u or "/open/" in u for u in expected.values())


def test_derived_rows_carry_the_id_and_link_of_the_result_they_come_from(client, results):
    cite = {r["id"]: (r["system_id"], r["details_url"]) for r in results}
    for route in ("/v1/per-accelerator", "/v1/energy", "/v1/latency-bounds", "/v1/trends",
                  "/v1/costs"):
        rows = all_rows(client, route, **EVERYTHING)
        assert any(r["mlperf_id"] for r in rows), route  # v5.1 results have IDs
        for r in rows:
            assert (r["mlperf_id"], r["details_url"]) == cite[r["result_id"]], route
    ratios = all_rows(client, "/v1/ratios", **EVERYTHING)
    assert ratios
    for r in ratios:
        assert (r["offline_mlperf_id"], r["offline_details_url"]) == cite[r["offline_result_id"]]
        assert (r["other_mlperf_id"], r["other_details_url"]) == cite[r["other_result_id"]]


def test_every_inferencex_observation_carries_its_run_url_and_attribution(client):
    rows = all_rows(client, "/v1/observations")
    assert rows
    for r in rows:
        assert r["run_url"].startswith("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/")
        assert r["attribution"] == INFERENCEX_ATTRIBUTION
        assert r["measurer"] == "SemiAnalysis InferenceX"
    assert "SemiAnalysis" in INFERENCEX_ATTRIBUTION and "Apache License 2.0" in INFERENCEX_ATTRIBUTION
    r = client.get("/v1/observations", params={"format": "csv", "limit": 1000})
    got = list(csv.DictReader(io.StringIO(r.text)))
    assert got and {row["attribution"] for row in got} == {INFERENCEX_ATTRIBUTION}
    assert all(row["run_url"] for row in got)
