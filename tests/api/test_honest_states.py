"""Honest states (#36): a source that never loaded, a switched-off source, a validation rule
over no rows, and every empty answer's reason in order — a source without rows, an unknown
filter value, rows outside the closed + available defaults — on the API and the terminal."""

from __future__ import annotations

import re

import pytest

from ingest.refresh import refresh
from tests.conftest import make_settings, write_sources
from tests.helpers import REPO, RULES_ADOC, copy_data_dir, free_port


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """A first refresh where MLPerf cannot be reached (nothing carried for its URL), the rules
    and the curated files load, and Azure prices are switched off."""
    tmp = tmp_path_factory.mktemp("honest")
    dead = f"http://127.0.0.1:{free_port()}/summary.csv"
    sources = write_sources(tmp / "sources.toml", mlperf=f'rounds = {{ "v6.1" = "{dead}" }}',
                            mlperf_rules=f'url = "{RULES_ADOC}"', curated=f'dir = "{REPO / "data"}"')
    report = refresh(make_settings(tmp, sources, http_retries=0))
    return tmp, sources, report


@pytest.fixture
def first_client(first_run, tmp_path, client_for):
    tmp, sources, _ = first_run
    copy_data_dir(tmp / "var", tmp_path / "var")
    return client_for(make_settings(tmp_path, sources))


def test_the_terminal_says_one_short_line_per_source_and_points_at_the_mirror(first_run):
    _, _, report = first_run
    assert report.status == "partial", report.as_dict()
    lines = report.summary_lines()
    by_source = {line.split(":")[0]: line for line in lines[:-1] if not line.startswith("note")}
    assert by_source["mlperf"].startswith("mlperf: failed, never loaded — ")
    assert "kept its last good" not in by_source["mlperf"]
    assert by_source["azure_prices"] == "azure_prices: disabled"
    assert by_source["curated"].startswith("curated: updated, ")
    assert all(len(line) <= 300 for line in lines), [len(line) for line in lines]
    assert not re.search(r"https?://[^/\s]+/[^…\s]", "\n".join(lines))  # URLs cut to the host
    # the run's line names what failed, without repeating why (the line above says it)
    assert lines[-1].endswith("— mlperf did not load (above)")
    pointer = [line for line in lines if line.startswith("note: MLPerf could not be reached")]
    assert len(pointer) == 1
    section = re.search(r"section '([^']+)'", pointer[0]).group(1)
    assert f"### {section}" in (REPO / "README.md").read_text()
    # the run record keeps every word
    record = report.as_dict()
    assert "azure_prices" in record["disabled"]
    assert "127.0.0.1" in {s["source"]: s for s in record["sources"]}["mlperf"]["message"]


def test_health_says_never_loaded_and_disabled_and_only_the_first_degrades(first_client):
    h = first_client.get("/healthz").json()
    states = {s["source"]: (s["state"], s["stale"]) for s in h["sources"]}
    assert states["mlperf"] == ("never_loaded", False)
    assert states["azure_prices"] == ("disabled", False)
    assert states["curated"] == ("fresh", False)
    assert h["status"] == "degraded"  # mlperf never loaded; a disabled source alone would not
    # rules over tables with no rows checked nothing: said, not passed
    assert {"mlperf_result", "azure_price"} <= set(h["validation"]["no_rows"])
    assert "claim" not in h["validation"]["no_rows"]
    rows = first_client.get(f"/v1/refreshes/{h['last_refresh']['id']}/validation").json()["rows"]
    counted = {r["table_name"]: r["rows_checked"] for r in rows if r.get("rows_checked") is not None}
    assert counted["mlperf_result"] == 0 and counted["claim"] > 0


def test_a_disabled_source_alone_leaves_health_ok(tmp_path, client_for):
    sources = write_sources(tmp_path / "sources.toml", mlperf_rules=f'url = "{RULES_ADOC}"',
                            curated=f'dir = "{REPO / "data"}"', mlperf='enabled = false')
    report = refresh(make_settings(tmp_path, sources))
    assert report.status == "published", report.as_dict()
    assert report.exit_code == 0
    # a refresh of one source still says which are switched off
    only = refresh(make_settings(tmp_path, sources), only=["curated"])
    assert "mlperf" in only.disabled and "azure_prices" in only.disabled
    h = client_for(make_settings(tmp_path, sources)).get("/healthz").json()
    assert h["status"] == "ok", h
    assert {s["source"]: s["state"] for s in h["sources"]}["mlperf"] == "disabled"


@pytest.mark.parametrize(("path", "source", "why"), [
    ("/v1/results", "mlperf", "has never loaded"),
    ("/v1/ratios?model=llama2-70b", "mlperf", "has never loaded"),
    ("/v1/energy", "mlperf", "has never loaded"),
    ("/v1/costs?rate=10", "mlperf", "has never loaded"),
    ("/v1/claim-checks", "mlperf", "has never loaded"),  # claims meet each round's results
    ("/v1/prices", "azure_prices", "is switched off"),
    ("/v1/prices/history?sku=Standard_ND96isr_H100_v5", "azure_prices", "is switched off"),
])
def test_an_empty_answer_names_the_source_first(first_client, path, source, why):
    body = first_client.get(path).json()
    assert body["total"] == 0
    assert body["hint"].startswith("no rows: "), body["hint"]
    assert f"the {source} source {why}" in body["hint"]
    assert "division=all" not in body["hint"]


def test_without_prices_the_default_cost_basis_is_the_assumed_rates(rounds_client):
    """rounds_client's snapshot has MLPerf but no Azure prices (switched off)."""
    rows = rounds_client.get("/v1/costs", params={"model": "llama2-70b", "limit": 1000}).json()
    assert rows["rows"] and {r["price_basis"] for r in rows["rows"]} == {"assumed"}
    asked = rounds_client.get("/v1/costs", params={"model": "llama2-70b", "basis": "list_price",
                                                   "limit": 1000}).json()["rows"]
    assert asked and {r["price_status"] for r in asked} == {"no price"}


def test_with_prices_the_default_cost_basis_is_both(evidence_client):
    both = evidence_client.get("/v1/costs", params={"model": "llama2-70b", "limit": 1000}).json()
    assert {r["price_basis"] for r in both["rows"]} == {"assumed", "list_price"}


def _total(client, path, **params) -> int:
    return client.get(path, params={"limit": 1, **params}).json()["total"]


def test_an_unknown_value_is_named_before_the_defaults(rounds_client):
    body = rounds_client.get("/v1/results", params={"model": "no-such-model"}).json()
    assert body["total"] == 0
    assert body["hint"].startswith("no model 'no-such-model' in this snapshot")
    assert "division=all" not in body["hint"]


def test_a_short_accelerator_name_is_known_wherever_it_resolves(rounds_client):
    """MI300X is known (amd-mi300x has results): an empty energy answer never says there is no
    such accelerator, and suggests division=all only if rows exist there."""
    assert _total(rounds_client, "/v1/results", accelerator="MI300X", division="all",
                  availability="all") > 0
    body = rounds_client.get("/v1/energy", params={"accelerator": "MI300X"}).json()
    if body["total"]:
        pytest.fail("the carried rounds have closed, available MI300X power results; pick another case")
    assert "no accelerator" not in body["hint"]
    wide = _total(rounds_client, "/v1/energy", accelerator="MI300X", division="all",
                  availability="all")
    assert ("division=all" in body["hint"]) == (wide > 0)


def test_division_all_is_suggested_only_when_rows_exist_outside_the_defaults(rounds_client):
    meta = rounds_client.get("/v1/meta").json()
    outside = inside_none = None
    for org in meta["organizations"]:
        every = _total(rounds_client, "/v1/results", organization=org, division="all",
                       availability="all")
        default = _total(rounds_client, "/v1/results", organization=org)
        if every and not default and outside is None:
            outside = org
        if inside_none is None:
            for model in meta["model_families"]:
                if not _total(rounds_client, "/v1/results", organization=org, model=model,
                              division="all", availability="all"):
                    inside_none = (org, model)
                    break
        if outside and inside_none:
            break
    assert outside and inside_none, "the carried rounds have both cases"
    body = rounds_client.get("/v1/results", params={"organization": outside}).json()
    assert body["total"] == 0
    assert body["hint"].endswith("add division=all&availability=all to see every system")
    org, model = inside_none
    body = rounds_client.get("/v1/results", params={"organization": org, "model": model}).json()
    assert body["total"] == 0
    assert "division=all" not in body["hint"]
    assert body["hint"] == "no system matches these filters in any division or availability"


@pytest.fixture(scope="module")
def no_azure(tmp_path_factory):
    """MLPerf, the rules and the curated files load; Azure prices never do (nothing listens
    where the sources file points)."""
    from tests.conftest import full_sources

    tmp = tmp_path_factory.mktemp("no-azure")
    sources = full_sources(tmp / "sources.toml", None,
                           azure_prices=f'url = "http://127.0.0.1:{free_port()}/prices"')
    report = refresh(make_settings(tmp, sources, http_retries=0))
    assert report.status == "partial", report.as_dict()
    return tmp, sources


@pytest.fixture
def no_azure_client(no_azure, tmp_path, client_for):
    tmp, sources = no_azure
    copy_data_dir(tmp / "var", tmp_path / "no-azure" / "var")
    return client_for(make_settings(tmp_path / "no-azure", sources))


def test_priced_costs_without_azure_name_the_price_source(no_azure_client):
    """#48: this said "no system matches these filters in any division or availability"."""
    body = no_azure_client.get("/v1/costs", params={"basis": "list_price",
                                                    "price_status": "priced"}).json()
    assert body["total"] == 0
    assert body["hint"].startswith("no rows: the azure_prices source has never loaded"), body
    assert "division" not in body["hint"]


def test_no_price_rows_carry_a_hint_saying_why(no_azure_client, full_client):
    """#48: 'no price' rows came with hint: null; the hint counts them and says why (the
    price source never loaded, or Azure does not rent the accelerator there)."""
    body = no_azure_client.get("/v1/costs", params={"basis": "list_price",
                                                    "model": "llama2-70b", "limit": 5}).json()
    assert body["total"] > 5  # counted over every matching row, not the page
    assert body["hint"].startswith(f"{body['total']:,} rows say 'no price' (the azure_prices "
                                   "source has never loaded"), body["hint"]
    assert body["hint"].endswith("basis=assumed gives them a cost at assumed rates")
    params = {"basis": "list_price", "accelerator": "nvidia-h200,nvidia-b300-sxm-270gb",
              "division": "all", "availability": "all", "limit": 1000}
    rows = full_client.get("/v1/costs", params=params).json()
    unpriced = [r for r in rows["rows"] if r["price_status"] == "no price"]
    assert unpriced and len(unpriced) < rows["total"] <= 1000
    assert rows["hint"] == (f"{len(unpriced)} rows say 'no price' (no Azure list price for "
                            "their accelerator in eastus2 (on_demand, linux)); basis=assumed "
                            "gives them a cost at assumed rates")
    priced = full_client.get("/v1/costs", params={**params, "price_status": "priced"}).json()
    assert priced["total"] == rows["total"] - len(unpriced) and priced["hint"] is None
