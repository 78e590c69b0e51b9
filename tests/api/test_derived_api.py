"""Derived figures over the API, checked against values computed here from the CSV itself."""

from __future__ import annotations

import csv
from collections import defaultdict

import pytest

from ingest.refresh import refresh
from tests.azure_emulator import seed_items
from tests.conftest import full_sources, make_settings, mount_azure
from tests.helpers import SUMMARY_CSV


def all_rows(client, url: str, **params) -> list[dict]:
    out, params = [], {"limit": 1000, **params}
    body = client.get(url, params=params).json()
    out += body["rows"]
    while body["next"]:
        body = client.get(body["next"]).json()
        out += body["rows"]
    return out


@pytest.fixture(scope="module")
def csv_pairs() -> dict[tuple, dict[str, tuple[float, str, int]]]:
    """(round, division, org, platform, model) → scenario → (result, units, accelerators),
    normalised here independently of the code under test."""
    systems: dict[tuple, dict] = defaultdict(dict)
    with SUMMARY_CSV.open(newline="") as f:
        for r in csv.DictReader(f):
            model = r["Model"].lower().replace("3_1", "3.1")
            key = (r["version"], r["Division"], r["Organization"], r["Platform"], model)
            systems[key][r["Scenario"].capitalize()] = (float(r["Result"]), r["Units"],
                                                        int(r["total_accelerators"]))
    return systems


def test_every_offline_interactive_ratio_matches_the_csv(full_client, csv_pairs):
    expected = {}
    for key, by in csv_pairs.items():
        if "Offline" in by and "Interactive" in by and by["Offline"][1] == by["Interactive"][1] == "Tokens/s":
            expected[key] = by["Interactive"][0] / by["Offline"][0]
    got = {(r["round"], r["division"], r["organization"], r["platform"], r["model_id"]): r["ratio"]
           for r in all_rows(full_client, "/v1/ratios", scenario="Interactive", include_flagged="false",
                             division="all", availability="all")}
    assert len(expected) >= 20
    assert got.keys() == expected.keys()
    for key, ratio in expected.items():
        assert got[key] == pytest.approx(ratio, rel=1e-12), key


def test_every_offline_server_ratio_matches_the_csv(full_client, csv_pairs):
    expected = {key: by["Server"][0] / by["Offline"][0] for key, by in csv_pairs.items()
                if "Offline" in by and "Server" in by and by["Offline"][1] == by["Server"][1]}
    got = {(r["round"], r["division"], r["organization"], r["platform"], r["model_id"]): r["ratio"]
           for r in all_rows(full_client, "/v1/ratios", scenario="Server", include_flagged="false",
                             division="all", availability="all")}
    assert got.keys() == expected.keys()
    assert all(got[k] == pytest.approx(v, rel=1e-12) for k, v in expected.items())


def test_article_examples(full_client):
    rows = all_rows(full_client, "/v1/ratios", model="deepseek-r1", scenario="Interactive",
                    organization="NVIDIA")
    [gb300] = [r for r in rows if r["platform"] == "GB300-NVL72_GB300-288GB_aarch64x72_TRT"]
    assert (gb300["offline_result"], gb300["other_result"]) == (679740.0, 253506.0)
    assert round(gb300["ratio"], 3) == 0.373 and gb300["total_accelerators"] == 72
    assert gb300["basis"] == "derived: measured" and gb300["offline_inferred"] is False
    mi355 = all_rows(full_client, "/v1/ratios", model="llama3.1-8b", scenario="Interactive",
                     accelerator="amd-mi355x")
    ratios = sorted(round(r["ratio"], 3) for r in mi355)
    assert 0.824 in ratios and 0.828 in ratios


def test_flagged_pairings_and_no_cross_unit_division(full_client):
    rows = all_rows(full_client, "/v1/ratios")
    pairs = {(r["offline_units"], r["other_units"]) for r in rows}
    assert pairs <= {("Tokens/s", "Tokens/s"), ("Samples/s", "Samples/s"),
                     ("Samples/s", "Queries/s")}
    flagged = [r for r in rows if r["flagged"]]
    assert flagged and all(r["unit_pairing"] == "samples_vs_queries" for r in flagged)
    assert all(not r["flagged"] for r in rows if r["offline_units"] == r["other_units"])


def test_per_accelerator_throughput(full_client):
    r = full_client.get("/v1/results", params={"model": "deepseek-r1", "scenario": "Interactive",
                                               "system": "GB300 NVL72"}).json()["rows"]
    from math import isclose
    gb300 = [x for x in r if x["total_accelerators"] == 72 and x["organization"] == "NVIDIA"][0]
    assert isclose(gb300["result"] / 72, 3520.9, rel_tol=1e-4)
    ratios = all_rows(full_client, "/v1/ratios", model="llama2-70b-99.9", scenario="Interactive",
                      organization="AMD")
    [amd] = [x for x in ratios if x["total_accelerators"] == 8]
    assert round(amd["other_result"] / 8) == 9149


def test_latency_bounds(full_client):
    rows = all_rows(full_client, "/v1/latency-bounds", model="deepseek-r1", scenario="Interactive",
                    organization="NVIDIA", answer_tokens=1000)
    [gb200] = [r for r in rows if r["platform"] == "GB200-NVL72_GB200-186GB_aarch64x72_TRT"]
    assert round(gb200["min_tokens_per_s_per_user"], 1) == 66.7
    assert round(gb200["max_concurrent_streams"]) == 3604
    assert gb200["answer_seconds"] == pytest.approx(16.485)  # the article rounds to 16.49
    llama = all_rows(full_client, "/v1/latency-bounds", model="llama2-70b-99.9",
                     scenario="Interactive")
    assert llama and {round(r["reference_answer_seconds"], 2) for r in llama} == {12.17}


def test_cost_at_a_given_rate_matches_hand_arithmetic(full_client):
    [row] = all_rows(full_client, "/v1/costs", basis="assumed", rate=12.29, model="deepseek-r1",
                     scenario="Interactive", accelerator="nvidia-gb200", organization="NVIDIA")[:1]
    by_hand = 12.29 * row["total_accelerators"] / (row["result"] * 3600) * 1_000_000
    assert row["cost_per_million_tokens"] == pytest.approx(by_hand)
    assert row["basis"] == "derived: measured + assumption"


def test_list_price_cost_and_no_price(full_client):
    h200 = all_rows(full_client, "/v1/costs", basis="list_price", accelerator="nvidia-h200",
                    division="all", availability="all")
    assert h200
    for r in h200:
        assert r["sku"] == "Standard_ND96isr_H200_v5" and r["price_status"] == "priced"
        assert r["rate_per_accelerator_hour"] == pytest.approx(84.80 / 8)
        assert r["cost_per_million_tokens"] == pytest.approx(
            84.80 / 8 * r["total_accelerators"] / (r["result"] * 3600) * 1e6)
        assert r["basis"] == "derived: measured + list_price"
    b300 = all_rows(full_client, "/v1/costs", basis="list_price",
                    accelerator="nvidia-b300-sxm-270gb")
    assert b300 and {r["price_status"] for r in b300} == {"no price"}
    assert {r["cost_per_million_tokens"] for r in b300} == {None}


@pytest.mark.parametrize("path", ["/v1/ratios", "/v1/costs", "/v1/latency-bounds"])
def test_ranking_routes_default_to_what_a_buyer_can_get(full_client, csv_pairs, path):
    """Closed division and available systems unless asked; ``all`` brings the rest back."""
    default = all_rows(full_client, path, model="deepseek-r1")
    every = all_rows(full_client, path, model="deepseek-r1", division="all", availability="all")
    assert default and {(r["division"], r["availability"]) for r in default} == {
        ("closed", "available")}
    assert {r["division"] for r in every} >= {"closed", "open"}
    assert {r["availability"] for r in every} > {"available"}
    assert {r["id"] for r in default} == {
        r["id"] for r in every if r["division"] == "closed" and r["availability"] == "available"}
    preview = all_rows(full_client, path, model="deepseek-r1", availability="preview")
    assert preview and {(r["division"], r["availability"]) for r in preview} == {
        ("closed", "preview")}


def test_interactive_premium_is_offline_over_interactive(full_client):
    rows = all_rows(full_client, "/v1/costs", basis="assumed", rate=10, model="deepseek-r1",
                    organization="NVIDIA", scenario="Interactive")
    [gb300] = [r for r in rows if r["platform"] == "GB300-NVL72_GB300-288GB_aarch64x72_TRT"]
    assert gb300["premium_vs_offline"] == pytest.approx(679740 / 253506)


@pytest.mark.parametrize("query, param", [
    ("rate=-5", "rate"), ("rate=0", "rate"), ("basis=cheap", "basis"), ("offer=free", "offer"),
    ("as_of=someday", "as_of"), ("scenario=Warp", "scenario"),
])
def test_nonsense_cost_parameters_get_422(full_client, query, param):
    r = full_client.get(f"/v1/costs?{query}")
    assert r.status_code == 422 and r.json()["error"]["param"] == param


def test_claim_checks(full_client):
    rows = {r["claim_id"]: r for r in all_rows(full_client, "/v1/claim-checks", round="v6.1")}
    assert rows["cerebras-llama3.1-405b-969"]["verdict"] == "no MLPerf submission in round v6.1"
    for vendor in ("Groq", "SambaNova"):
        assert all(r["verdict"] == "no MLPerf submission in round v6.1"
                   for r in rows.values() if r["vendor"] == vendor)
    bw = rows["cerebras-wse3-bandwidth-7000x-h100"]
    assert round(bw["recomputed_value"]) == 6269
    assert bw["basis"] == "derived: vendor_spec + vendor_claim"


def test_price_change_moves_cost_after_not_before(full_copy, server, client_for):
    tmp, _ = full_copy
    settings = make_settings(tmp, full_sources(tmp / "sources.toml", server))
    items = seed_items()
    items[1] = {**items[1], "retailPrice": 80.0, "unitPrice": 80.0,
                "effectiveStartDate": "2026-11-15T00:00:00Z"}
    mount_azure(server, items, page_size=4)
    assert refresh(settings).status == "published"
    client = client_for(settings)

    def rate(as_of=None):
        params = {"basis": "list_price", "accelerator": "nvidia-h200", "limit": 1,
                  "division": "all", "availability": "all"}
        if as_of:
            params["as_of"] = as_of
        return client.get("/v1/costs", params=params).json()["rows"][0]["rate_per_accelerator_hour"]

    assert rate("2026-10-25") == pytest.approx(10.60)
    assert rate("2026-11-20") == pytest.approx(10.0)
    assert rate() == pytest.approx(10.0)


@pytest.mark.parametrize("offer", ["on_demand", "reservation"])
def test_list_price_cost_view_equals_the_costs_route(evidence_warehouse, evidence_client,
                                                     offer):
    """An analyst's plain SELECT on list_price_cost gives the rows /v1/costs serves on the
    list-price basis (its priced ones), value for value."""
    import json

    import duckdb

    from warehouse.model.public import CostPublic

    tmp = evidence_warehouse
    current = json.loads((tmp / "var" / "CURRENT").read_text())["file"]
    con = duckdb.connect(str(tmp / "var" / "snapshots" / current), read_only=True)
    cur = con.execute("SELECT * FROM list_price_cost WHERE region = 'eastus2' AND offer = ? "
                      "AND os = 'linux' ORDER BY id", [offer])
    names = [d[0] for d in cur.description]
    view = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    con.close()
    api = all_rows(evidence_client, "/v1/costs", basis="list_price", offer=offer, region="eastus2",
                   price_status="priced", division="all", availability="all", sort="id")
    assert view and len(view) == len(api)
    # the view prices MLPerf's results; the route's observation columns are NULL on them
    fields = [c for c in CostPublic.model_fields if c in names and c != "price_valid_from"]
    assert set(CostPublic.model_fields) - set(names) == {
        "evidence", "conc", "isl", "osl", "interactivity", "observed_on", "run_url", "file_name"}
    for v, a in zip(view, api, strict=True):
        assert a["evidence"] == "measured" and a["conc"] is None and a["run_url"] is None
        assert {c: v[c] for c in fields} == {c: a[c] for c in fields}
        assert v["price_valid_from"].isoformat() == a["price_valid_from"]
        assert v["cost_per_million_tokens"] == pytest.approx(
            v["rate_per_accelerator_hour"] * v["total_accelerators"] / (v["result"] * 3600) * 1e6)
    if offer == "reservation":  # one row per term, each named
        assert {v["reservation_term"] for v in view} == {"1 Year", "3 Years"}


@pytest.fixture(scope="module")
def preview_claim_client(tmp_path_factory, full_warehouse):
    """The full warehouse's v6.1 CSV and curated files plus one claim about the accelerator of
    v6.1's preview Vera Rubin NVL72 on DeepSeek-R1 (#48: claim checks take division and
    availability like every route over MLPerf results)."""
    import shutil

    from fastapi.testclient import TestClient

    from api.app import create_app
    from tests.helpers import REPO

    tmp = tmp_path_factory.mktemp("preview-claim")
    shutil.copytree(REPO / "data", tmp / "data")
    probe = TestClient(create_app(make_settings(full_warehouse, full_warehouse / "sources.toml")))
    [rubin] = {r["accelerator_id"] for r in all_rows(
        probe, "/v1/results", model="deepseek-r1", system="Vera Rubin", availability="preview")}
    probe.app.state.reader.close()
    with (tmp / "data" / "claims.yaml").open("a") as claims:
        for claim, model in (("test-rubin-deepseek", "deepseek-r1"),  # and as MLPerf spells it
                             ("test-rubin-deepseek-as-mlperf-spells-it", "DeepSeek-R1")):
            claims.write(f"""
  - id: {claim}
    vendor: NVIDIA
    product: Vera Rubin NVL72
    accelerator_id: {rubin}
    model: {model}
    metric: output_tokens_per_s
    value: 1000000
    unit: tokens/s
    evidence: vendor_claim
    claimed_on: 2026-10-25
    source:
      title: "a test claim"
      url: https://example.com/rubin
      checked_on: 2026-10-25
      quote: "a million tokens per second"
""")
    sources = full_sources(tmp / "sources.toml", curated=f'dir = "{tmp / "data"}"')
    assert refresh(make_settings(tmp, sources)).status == "published"
    client = TestClient(create_app(make_settings(tmp, sources)))
    yield client, rubin
    client.app.state.reader.close()


def test_a_claim_finds_its_counterpart_however_it_spells_the_model(preview_claim_client):
    """The model of a claim is matched by its family (``claim.model_family``), as every other
    claim check does: MLPerf's own spelling, DeepSeek-R1, finds the same result."""
    client, _ = preview_claim_client
    checks = {r["claim_id"]: r for r in all_rows(client, "/v1/claim-checks", round="v6.1",
                                                 availability="all")}
    spelt = checks["test-rubin-deepseek-as-mlperf-spells-it"]
    assert spelt["closest_result_id"] is not None
    assert spelt["closest_result_id"] == checks["test-rubin-deepseek"]["closest_result_id"]
    assert spelt["verdict"].startswith("measured counterpart in v6.1")


@pytest.mark.parametrize("params", [{}, {"availability": "all"}, {"availability": "preview"},
                                    {"division": "all", "availability": "all"}])
def test_claim_checks_compare_within_the_division_and_availability_asked(preview_claim_client,
                                                                         params):
    client, rubin = preview_claim_client
    [check] = [r for r in all_rows(client, "/v1/claim-checks", round="v6.1", **params)
               if r["claim_id"] == "test-rubin-deepseek"]
    # the counterpart, found independently: the best Server/Interactive Tokens/s result of
    # that accelerator on DeepSeek-R1 among the results the same filters list
    results = [r for r in all_rows(client, "/v1/results", model="deepseek-r1", round="v6.1",
                                   accelerator=rubin, units="Tokens/s", **params)
               if r["scenario"] in ("Server", "Interactive")]
    best = max(results, key=lambda r: r["result"], default=None)
    assert check["closest_result_id"] == (best and best["id"])
    assert check["comparable_results"] == (len(results) or None)
    assert bool(results) == (params.get("availability") in ("all", "preview"))
    assert check["vendor_or_accelerator_in_round"] is True  # NVIDIA is in v6.1 either way


def test_claim_checks_refuse_an_unknown_division(full_client):
    r = full_client.get("/v1/claim-checks", params={"division": "closedd"})
    assert r.status_code == 422 and r.json()["error"]["param"] == "division"
