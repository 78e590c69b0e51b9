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
    exact = full_client.get("/v1/results?division=all&availability=all&organization=NVIDIA&limit=1000").json()["total"]
    assert exact > 0
    assert full_client.get("/v1/results?division=all&availability=all&organization=nvidia&limit=1").json()["total"] == exact
    v61 = full_client.get("/v1/results?division=all&availability=all&round=v6.1&limit=1").json()["total"]
    assert v61 == 492 == full_client.get("/v1/results?division=all&availability=all&round=6.1&limit=1").json()["total"]
    assert full_client.get("/v1/results?division=all&availability=all&round=V6.1&limit=1").json()["total"] == 492
    eastus2 = full_client.get("/v1/prices?region=eastus2&limit=1").json()["total"]
    assert eastus2 > 0 and full_client.get("/v1/prices?region=EastUS2&limit=1").json()["total"] \
        == eastus2
    by_id = full_client.get("/v1/results?division=all&availability=all&accelerator=nvidia-gb200&limit=1").json()["total"]
    assert by_id > 0
    assert full_client.get("/v1/results?division=all&availability=all&accelerator=NVIDIA-GB200&limit=1").json()["total"] == by_id
    assert full_client.get("/v1/claims?vendor=cerebras&limit=1").json()["total"] == \
        full_client.get("/v1/claims?vendor=Cerebras&limit=1").json()["total"] > 0


def test_weak_etags_and_if_modified_since_revalidate(full_client):
    first = full_client.get("/v1/results?limit=3")
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    big = full_client.get("/v1/results?limit=200", headers={"Accept-Encoding": "gzip"})
    assert big.headers["vary"] == "Accept, Accept-Encoding"  # once each
    assert "Accept" in first.headers["vary"].split(", ")
    assert etag.startswith('W/"')  # weak: the same representation, gzipped or not
    for tag in (etag, etag.removeprefix("W/")):  # compared weakly: either spelling matches
        assert full_client.get("/v1/results?limit=3", headers={"If-None-Match": tag}) \
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


def _csv_count(word: str) -> int:
    """Rows of the v6.1 CSV whose single accelerator's published name has ``word`` as a word
    (mixed systems, 'A + B' or 'A and B', have no one accelerator)."""
    import csv
    import re

    from tests.helpers import SUMMARY_CSV

    with SUMMARY_CSV.open(newline="") as f:
        names = [r["accelerator_model_name"] for r in csv.DictReader(f)]
    return sum(1 for n in names if " + " not in n and " and " not in n
               and word.lower() in re.split(r"[\s-]+", n.lower()))


@pytest.mark.parametrize("short, ident", [
    ("H200", "nvidia-h200"), ("h200", "nvidia-h200"), ("MI355X", "amd-mi355x"),
    ("B200", "nvidia-b200-sxm-180gb"), ("NVIDIA B200-SXM-180GB", "nvidia-b200-sxm-180gb"),
])
def test_accelerator_short_names_and_spellings_find_the_id(full_client, short, ident):
    expected = _csv_count(short.split()[-1].split("-")[0])
    assert expected > 0
    got = full_client.get("/v1/results", params={"accelerator": short, "limit": 1000,
                                                 "division": "all", "availability": "all"}).json()
    assert got["total"] == expected
    assert {r["accelerator_id"] for r in got["rows"]} == {ident}
    for path in ("/v1/per-accelerator", "/v1/costs"):  # every route over results resolves alike
        a = full_client.get(path, params={"accelerator": short, "limit": 1}).json()["total"]
        assert a == full_client.get(path, params={"accelerator": ident, "limit": 1}).json()["total"]


@pytest.mark.parametrize("path", ["/v1/results", "/v1/ratios", "/v1/prices"])
@pytest.mark.parametrize("short, candidates", [
    ("H100", ["nvidia-h100-nvl", "nvidia-h100-sxm"]),
    ("RTX PRO 6000", ["nvidia-rtx-pro-6000-blackwell", "nvidia-rtx-pro-6000-blackwell-server"]),
])
def test_an_ambiguous_short_name_is_a_422_listing_the_candidates(full_client, path, short,
                                                                 candidates):
    r = full_client.get(path, params={"accelerator": short})
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["param"] == "accelerator" and "ambiguous" in error["message"]
    assert all(c in error["message"] for c in candidates)


def test_a_query_matching_nothing_says_why(full_client):
    typo = full_client.get("/v1/results?model=llama2-70b-9").json()
    assert typo["total"] == 0 and typo["rows"] == []
    assert "no model 'llama2-70b-9'" in typo["hint"] and "did you mean 'llama2-70b'" in typo["hint"]
    assert "known: " in typo["hint"]
    org = full_client.get("/v1/ratios?organization=Nobody").json()
    assert "no organization 'Nobody'" in org["hint"] and "NVIDIA" in org["hint"]
    acc = full_client.get("/v1/costs?accelerator=TPU9").json()
    assert acc["total"] == 0 and "no accelerator 'TPU9'" in acc["hint"]
    # every value known, nothing together; and the buyer default named where it applied
    both = full_client.get("/v1/results?model=llama2-70b&availability=preview").json()
    assert both["total"] == 0 and "together" in both["hint"]
    # ScitiX's only ratio in v6.1 is open-division (deepseek-r1): hidden by the buyer default
    ranked = full_client.get("/v1/ratios?organization=ScitiX").json()
    every = full_client.get("/v1/ratios?organization=ScitiX&division=all").json()
    assert ranked["total"] == 0 and every["total"] == 1 and every["rows"][0]["division"] == "open"
    assert "division=all&availability=all" in ranked["hint"]
    assert full_client.get("/v1/results?model=llama2-70b&limit=1").json()["hint"] is None


@pytest.mark.parametrize("path, param, values", [
    ("/v1/costs", "rate", ["7", "12.5"]),
    ("/v1/costs", "basis", ["assumed", "list_price"]),
    ("/v1/results", "model", ["llama2-70b", "deepseek-r1"]),
    ("/v1/results", "scenario", ["Server", "Offline"]),
    ("/v1/results", "organization", ["AMD", "nvidia"]),
    ("/v1/results", "accelerator", ["B200", "amd-mi355x"]),
    ("/v1/ratios", "division", ["closed", "open"]),
    ("/v1/trends", "availability", ["available", "preview"]),
    ("/v1/prices", "offer", ["spot", "on_demand"]),
    ("/v1/results", "sort", ["-result", "id"]),
    ("/v1/results", "columns", ["id", "result"]),
])
def test_repeated_parameters_and_comma_lists_are_the_same(full_client, path, param, values):
    repeated = full_client.get(path, params=[(param, v) for v in values] + [("limit", 1000)])
    comma = full_client.get(path, params=[(param, ",".join(values)), ("limit", 1000)])
    assert repeated.status_code == comma.status_code == 200, comma.text
    a, b = repeated.json(), comma.json()
    assert a["total"] == b["total"] > 0 and a["rows"] == b["rows"]
    one = full_client.get(path, params=[(param, values[0]), ("limit", 1000)]).json()
    if param not in ("sort", "columns"):  # two values select more than one does
        assert a["total"] > one["total"]


RESULT_ROUTES = ["/v1/results", "/v1/per-accelerator", "/v1/energy", "/v1/ratios", "/v1/costs",
                 "/v1/latency-bounds", "/v1/trends"]


@pytest.mark.parametrize("path", RESULT_ROUTES)
def test_every_results_route_takes_one_vocabulary_with_one_default(full_client, path):
    """The same parameter set is accepted by every route over MLPerf results; division and
    availability default to closed + available and ``all`` selects every system."""
    same = {"round": "6.1", "model": "llama2-70b", "accelerator": "B200", "organization": "nvidia",
            "system": "dgx", "division": "all", "availability": "all", "limit": 1000}
    r = full_client.get(path, params=same)
    assert r.status_code == 200, r.text
    rows = r.json()["rows"]
    assert all(row["round"] == "v6.1" for row in rows)
    assert all("dgx" in (row["system_name"] or "").lower() for row in rows)
    default = full_client.get(path, params={"limit": 1000}).json()["rows"]
    everything = full_client.get(path, params={"limit": 1000, "division": "all",
                                               "availability": "all"}).json()
    assert all(row["division"] == "closed" and row["availability"] == "available"
               for row in default)
    assert everything["total"] >= len(default)


def test_claim_checks_take_round_spellings_and_a_verdict(full_client):
    v61 = full_client.get("/v1/claim-checks?round=v6.1&limit=1000").json()
    assert v61["total"] > 0
    assert full_client.get("/v1/claim-checks?round=6.1&limit=1000").json()["total"] == v61["total"]
    verdict = v61["rows"][0]["verdict"]
    picked = full_client.get("/v1/claim-checks", params={"round": "6.1", "verdict": verdict,
                                                         "limit": 1000}).json()
    assert picked["total"] == sum(1 for r in v61["rows"] if r["verdict"] == verdict)
    assert full_client.get("/v1/claim-checks", params={"verdict": verdict.upper()}).json()[
        "total"] >= picked["total"]


def test_a_route_without_parameters_says_so_when_given_one(full_client):
    # #48: /v1/accelerators?limit=1 answered "accepted: _" (the query model's own name)
    r = full_client.get("/v1/accelerators", params={"limit": 1})
    assert r.status_code == 422
    assert r.json()["error"]["message"] == ("unknown parameter 'limit'; this route takes no "
                                            "query parameter")


def test_csv_booleans_are_spelled_as_json_and_sql_spell_them(full_client):
    # #48: CSV said True/False (Python's spelling)
    import csv
    import io

    r = full_client.get("/v1/ratios", params={"format": "csv", "limit": 1000})
    rows = list(csv.DictReader(io.StringIO(r.text)))
    flags = {row["flagged"] for row in rows}
    assert flags and flags <= {"true", "false"}
    json_rows = full_client.get("/v1/ratios", params={"limit": 1000}).json()["rows"]
    assert [row["flagged"] == "true" for row in rows] == [row["flagged"] for row in json_rows]


def test_results_hold_one_kind_of_figure_unless_units_asks(evidence_client):
    # #48: /v1/results mixed Watts rows with Tokens/s rows by default. v5.1's JSON gives a
    # power row for every record with a Power_Result (counted here from the file itself).
    import json

    from tests.helpers import V51_JSON

    every = {"limit": 1000, "division": "all", "availability": "all", "round": "v5.1"}
    default = evidence_client.get("/v1/results", params=every).json()
    assert default["total"] and all(r["units"] != "Watts" for r in default["rows"])
    power_units = {r["Power_Units"] for r in json.loads(V51_JSON.read_text())
                   if r.get("Power_Result") not in (None, "")}
    watts = evidence_client.get("/v1/results", params={**every, "units": sorted(power_units),
                                                       "limit": 1000}).json()
    published = sum(r.get("Power_Result") not in (None, "")
                    for r in json.loads(V51_JSON.read_text()))
    assert watts["total"] == published > 0
    assert {r["units"] for r in watts["rows"]} <= power_units
    assert default["total"] + watts["total"] == evidence_client.get(
        "/v1/results", params={**every, "units": sorted(power_units | {
            "Tokens/s", "Samples/s", "Queries/s", "Latency (ms)"})}).json()["total"]


def test_a_mixed_system_says_so_per_accelerator(full_client):
    # #48: a mixed H200 + MI350X system was divided by its 16 accelerators under a NULL id
    # with nothing saying it was mixed
    rows = full_client.get("/v1/per-accelerator", params={"limit": 1000, "division": "all",
                                                          "availability": "all"}).json()["rows"]
    mixed = [r for r in rows if r["accelerator_mix"] == "mixed"]
    assert mixed and all(r["accelerator_id"] is None for r in mixed)
    assert {r["accelerator_mix"] for r in rows} <= {"single", "mixed", "none"}


def test_the_interactive_premium_is_for_interactive_rows(full_client):
    # #48: scenario_ratio.interactive_premium was filled for Server rows
    rows = full_client.get("/v1/ratios", params={"limit": 1000}).json()["rows"]
    server = [r for r in rows if r["scenario"] == "Server"]
    interactive = [r for r in rows if r["scenario"] == "Interactive"]
    assert server and all(r["interactive_premium"] is None for r in server)
    assert interactive and all(
        r["interactive_premium"] == pytest.approx(r["offline_result"] / r["other_result"])
        for r in interactive)


@pytest.mark.parametrize("url", ["/v1/results?sort=bogus", "/v1/results?columns=bogus",
                                 "/v1/prices?accelerator=nvidia"])
@pytest.mark.parametrize("condition", [{"If-None-Match": "*"},
                                       {"If-Modified-Since": "Sat, 05 Dec 2099 12:00:00 GMT"}])
def test_a_bad_request_is_a_422_even_when_conditional(full_client, url, condition):
    """A conditional header made a request that is a 422 without it a 304 (its ETag answered
    before the query was checked); preconditions apply to what would be a 2xx (RFC 9110
    13.2.1)."""
    assert full_client.get(url).status_code == 422
    assert full_client.get(url, headers=condition).status_code == 422
