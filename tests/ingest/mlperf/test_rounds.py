"""Every round in both formats, end to end: the real v5.1 JSON and v6.1 CSV in one refresh,
the figures history makes possible (energy, trends, families), each round loading and failing
on its own, and accelerator spellings of every round. Expected figures are computed here from
the files themselves."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest
import yaml

from ingest.refresh import refresh
from tests.conftest import full_sources, make_settings, write_sources
from tests.helpers import REPO, SUMMARY_CSV, V51_JSON
from tests.ingest.mlperf.test_json import checker_units


@pytest.fixture(scope="module")
def v51() -> list[dict]:
    return json.loads(V51_JSON.read_text())


@pytest.fixture(scope="module")
def v61() -> list[dict]:
    with SUMMARY_CSV.open(newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def all_rows(client, path: str, **params) -> list[dict]:
    rows, offset = [], 0
    while True:
        body = client.get(path, params={"division": "all", "availability": "all", **params,
                                        "limit": 1000, "offset": offset}).json()
        rows += body["rows"]
        if not body["next"]:
            return rows
        offset += 1000


def test_both_rounds_land_whole(rounds_warehouse, rounds_client, v51, v61):
    run = [s for s in json.loads(next((rounds_warehouse / "var" / "runs").glob("*.json"))
                                 .read_text())["sources"] if s["source"] == "mlperf"][0]
    assert run["status"] == "updated" and run["details"]["v5.1"]["format"] == "json"
    assert run["details"]["v6.1"]["format"] == "csv"
    perf = all_rows(rounds_client, "/v1/results", round="v5.1")  # throughput rows by default
    power_units = sorted({r["Power_Units"] for r in v51 if "Power_Result" in r})
    power = all_rows(rounds_client, "/v1/results", round="v5.1", units=power_units)
    assert not any(r["is_power"] for r in perf) and all(r["is_power"] for r in power)
    assert len(perf) == 1448 and len(power) == sum("Power_Result" in r for r in v51)
    assert Counter((r["division"], r["scenario"], r["units"]) for r in perf) == Counter(
        (r["Category"], r["Scenario"], checker_units(r)) for r in v51)
    assert len(all_rows(rounds_client, "/v1/results", round="v6.1")) == len(v61) == 492
    by_system = {(r["system_id"], r["model"], r["scenario"]): r for r in perf}
    for record in v51[:200]:
        row = by_system[(record["ID"], record["UsedModel"], record["Scenario"])]
        if record["a#"] != "" and "(x" not in record["Accelerator"]:
            assert row["total_accelerators"] == record["Nodes"] * int(record["a#"])


def test_energy_per_token_for_every_v51_power_record(rounds_client, v51):
    rows = {(r["platform"], r["model_id"], r["scenario"]): r
            for r in all_rows(rounds_client, "/v1/energy", round="v5.1")}
    powered = [r for r in v51 if "Power_Result" in r]
    assert len(rows) == len(powered) == 24
    for record in powered:
        row = rows[(record["Platform"], record["UsedModel"].lower(), record["Scenario"])]
        if record["Power_Units"] == "Watts":
            assert row["per_joule"] == pytest.approx(record["Performance_Result"]
                                                     / record["Power_Result"])
            assert row["joules_per_unit"] == pytest.approx(record["Power_Result"]
                                                           / record["Performance_Result"])
            assert row["per_joule_unit"] == record["Performance_Units"].split("/")[0].lower() + "/J"
        else:  # SingleStream/MultiStream: energy per query in millijoules
            assert record["Power_Units"] == "millijoules"
            assert row["per_joule"] == pytest.approx(1000 / record["Power_Result"])
        assert row["basis"] == "derived: measured"
    [platform] = [r["Platform"] for r in powered if r["Submitter"] == "Lenovo"
                  and r["UsedModel"] == "llama2-70b-99" and r["Scenario"] == "Offline"]
    lenovo = rows[(platform, "llama2-70b-99", "Offline")]  # the 102,909 / 10,401 W
    assert round(lenovo["per_joule"], 2) == 9.89 and lenovo["units"] == "Tokens/s"


def test_a_served_power_row_carries_its_results_accelerator_basis(rounds_client, v51):
    """v5.1 publishes no Total Accelerators: a power row's count is computed, as its
    performance row's is, and served so (12 computed, 12 CPU-only)."""
    units = sorted({r["Power_Units"] for r in v51 if "Power_Result" in r})
    power = all_rows(rounds_client, "/v1/results", round="v5.1", units=units)
    perf = {(r["system_id"], r["model"], r["scenario"]): r
            for r in all_rows(rounds_client, "/v1/results", round="v5.1")}
    assert Counter(r["total_accelerators_basis"] for r in power) == {"computed": 12, "none": 12}
    for row in power:
        twin = perf[(row["system_id"], row["model"], row["scenario"])]
        assert (row["total_accelerators"], row["total_accelerators_basis"]) == (
            twin["total_accelerators"], twin["total_accelerators_basis"])


def b200_names() -> set[str]:
    accelerators = yaml.safe_load((REPO / "data" / "accelerators.yaml").read_text())
    [b200] = [a for a in accelerators["accelerators"] if a["id"] == "nvidia-b200-sxm-180gb"]
    return set(b200["mlperf_names"])


def best_b200_llama2(v51: list[dict], v61: list[dict], scenario: str) -> dict[str, tuple[float, str]]:
    """Per round, the best closed, available B200 llama2-70b Tokens/s result per accelerator
    in ``scenario`` and its system, read from the files themselves."""
    names = b200_names()
    best: dict[str, tuple[float, str]] = {}
    for r in v51:
        if (r["Accelerator"] in names and r["UsedModel"].startswith("llama2-70b")
                and r["Scenario"] == scenario and r["Category"] == "closed"
                and r["Availability"] == "available" and r["Performance_Units"] == "Tokens/s"):
            value = r["Performance_Result"] / (r["Nodes"] * int(r["a#"]))
            best["v5.1"] = max(best.get("v5.1", (0.0, "")), (value, r["System"]))
    for r in v61:
        if (r["accelerator_model_name"] in names and r["Model"].startswith("llama2-70b")
                and r["Scenario"] == scenario and r["Division"] == "closed"
                and r["Availability"] == "available" and r["Units"] == "Tokens/s"):
            value = float(r["Result"]) / int(r["total_accelerators"])
            best["v6.1"] = max(best.get("v6.1", (0.0, "")), (value, r["SystemName"]))
    assert set(best) == {"v5.1", "v6.1"}
    return best


def test_trend_across_rounds_recomputed_from_the_files(rounds_client, v51, v61):
    best = best_b200_llama2(v51, v61, "Server")
    rows = all_rows(rounds_client, "/v1/trends", accelerator="nvidia-b200-sxm-180gb",
                    model="llama2-70b", scenario="Server", division="closed",
                    availability="available")  # the route's defaults (all_rows asks for all)
    assert [r["round"] for r in rows] == ["v5.1", "v6.1"]
    for row in rows:
        assert row["per_accelerator"] == pytest.approx(best[row["round"]][0])
        assert row["system_name"] == best[row["round"]][1]
        assert row["division"] == "closed" and row["availability"] == "available"
    assert rows[0]["change_vs_previous"] is None and rows[1]["previous_round"] == "v5.1"
    assert rows[1]["change_vs_previous"] == pytest.approx(best["v6.1"][0] / best["v5.1"][0] - 1)
    everything = all_rows(rounds_client, "/v1/trends", accelerator="nvidia-b200-sxm-180gb",
                          model="llama2-70b", scenario="Server", division="all",
                          availability="all")
    assert all(e["per_accelerator"] >= r["per_accelerator"]
               for e, r in zip(everything, rows, strict=True))


def test_a_round_filter_picks_the_rows_shown_not_the_round_compared_with(rounds_client, v51,
                                                                       v61):
    """round=v6.1 filtered the results before the window, so lag() saw no earlier round and
    every v6.1 row's previous_round and change were NULL: the v6.1 row compares with v5.1, as
    the unfiltered trend does (Lenovo's 12,863.6 then CoreWeave's 12,837.9 per B200)."""
    best = best_b200_llama2(v51, v61, "Offline")
    asked = {"accelerator": "nvidia-b200-sxm-180gb", "model": "llama2-70b",
             "scenario": "Offline", "division": "closed", "availability": "available"}
    [row] = all_rows(rounds_client, "/v1/trends", round="v6.1", **asked)
    assert (row["round"], row["previous_round"]) == ("v6.1", "v5.1")
    assert row["per_accelerator"] == pytest.approx(best["v6.1"][0])
    assert row["system_name"] == best["v6.1"][1]
    assert row["previous_per_accelerator"] == pytest.approx(best["v5.1"][0])
    assert row["change_vs_previous"] == pytest.approx(best["v6.1"][0] / best["v5.1"][0] - 1)
    [older] = all_rows(rounds_client, "/v1/trends", round="5.1", **asked)  # nothing before it
    assert older["per_accelerator"] == pytest.approx(best["v5.1"][0])
    assert older["previous_round"] is None and older["change_vs_previous"] is None
    # every row of a round is the unfiltered trend's row of that round
    default = {"division": "closed", "availability": "available"}
    whole = all_rows(rounds_client, "/v1/trends", **default)
    v61_rows = all_rows(rounds_client, "/v1/trends", round="v6.1", **default)
    assert v61_rows == [r for r in whole if r["round"] == "v6.1"]
    assert any(r["previous_round"] == "v5.1" for r in v61_rows)


def test_a_model_family_matches_both_accuracy_targets_in_both_rounds(rounds_client, v51, v61):
    rows = all_rows(rounds_client, "/v1/results", model="llama2-70b")  # throughput rows
    targets = ("llama2-70b-99", "llama2-70b-99.9")  # open variants (llama2-70b-fp8_quark) are
    expected = Counter([("v5.1", r["UsedModel"]) for r in v51  # models of their own
                        if r["UsedModel"] in targets]
                       + [("v6.1", r["Model"]) for r in v61 if r["Model"] in targets])
    assert Counter((r["round"], r["model_id"]) for r in rows) == expected
    assert {m for _, m in expected} == {"llama2-70b-99", "llama2-70b-99.9"}  # both targets
    one = all_rows(rounds_client, "/v1/results", model="llama2-70b-99.9")
    assert {r["model_id"] for r in one} == {"llama2-70b-99.9"}
    meta = rounds_client.get("/v1/meta").json()
    assert "llama2-70b" in meta["model_families"] and "llama2-70b-99" in meta["models"]
    assert meta["rounds"] == ["v5.1", "v6.1"]
    # the seed article's figures, asked for by family
    bounds = all_rows(rounds_client, "/v1/latency-bounds", model="llama2-70b",
                      scenario="Interactive")
    assert {round(r["reference_answer_seconds"], 2) for r in bounds} == {12.17}
    assert {r["rule_basis"] for r in bounds} == {"latest"}
    per = all_rows(rounds_client, "/v1/per-accelerator", model="llama2-70b", round="v6.1",
                   scenario="Interactive", organization="AMD")
    assert 9149 in {round(r["per_accelerator"]) for r in per if r["total_accelerators"] == 8}
    for path in ("/v1/ratios", "/v1/costs", "/v1/claims", "/v1/rules"):
        assert rounds_client.get(path, params={"model": "llama2-70b"}).status_code == 200


def test_ratios_flag_unit_mismatches_of_every_round(rounds_client):
    rows = all_rows(rounds_client, "/v1/ratios", round="v5.1")
    pairs = {(r["offline_units"], r["other_units"], r["unit_pairing"], r["flagged"]) for r in rows}
    assert ("Samples/s", "Queries/s", "samples_vs_queries", True) in pairs
    assert all(f == (o != x) for o, x, _, f in pairs)


def test_llama31_8b_interactive_serves_as_tokens(rounds_warehouse, rounds_client):
    """v5.1's llama3.1-8b Interactive results, published as Queries/s, are Tokens/s (the
    publisher's checker, ingest/mlperf/units.py): paired with Offline as the same unit, served
    per accelerator and costed, and each corrected row is a warning in the run report."""
    ratios = all_rows(rounds_client, "/v1/ratios", round="v5.1", model="llama3.1-8b")
    assert {(r["offline_units"], r["other_units"], r["unit_pairing"], r["flagged"])
            for r in ratios} == {("Tokens/s", "Tokens/s", "same_units", False)}
    [dell] = [r for r in ratios if r["platform"] == "XE9680L_B200_SXM_180GBx8_TRT"
              and r["scenario"] == "Interactive"]
    assert (dell["offline_result"], dell["other_result"]) == (143309.0, 102907.0)
    assert dell["ratio"] == pytest.approx(102907 / 143309)
    per = all_rows(rounds_client, "/v1/per-accelerator", round="v5.1", model="llama3.1-8b",
                   scenario="Interactive")
    assert len(per) == 8 and {r["units"] for r in per} == {"Tokens/s"}
    [dell] = [r for r in per if r["platform"] == "XE9680L_B200_SXM_180GBx8_TRT"]
    assert dell["per_accelerator"] == 102907 / 8
    costs = all_rows(rounds_client, "/v1/costs", round="v5.1", model="llama3.1-8b",
                     scenario="Interactive", basis="assumed", rate=10)
    [dell] = [r for r in costs if r["platform"] == "XE9680L_B200_SXM_180GBx8_TRT"]
    assert dell["cost_per_million_tokens"] == pytest.approx(8 * 10 / (102907 * 3600) * 1e6)
    run = json.loads(next((rounds_warehouse / "var" / "runs").glob("*.json")).read_text())
    [warning] = [v for v in run["validation"] if v["expectation"].startswith(
        "mlperf_result: units corrected where the publisher's checker states them")]
    assert warning["severity"] == "warning" and warning["unexpected_count"] == 8
    assert "Queries/s" in warning["sample"] and "pull/2564" not in warning["sample"]
    assert "submission_checker/constants.py" in warning["sample"]


def test_one_round_failing_never_blocks_the_others(tmp_path, server, client_for):
    body = SUMMARY_CSV.read_bytes()
    server.files["/v6.1.csv"] = body
    rounds = (f'rounds = {{ "v5.1" = "http://127.0.0.1:9/summary_results.json", '
              f'"v6.1" = "{server.url("/v6.1.csv")}" }}')
    settings = make_settings(tmp_path, write_sources(tmp_path / "sources.toml", mlperf=rounds),
                             http_retries=0)
    report = refresh(settings)  # a first refresh: the reachable round is published
    assert report.status == "partial" and report.exit_code == 1
    [mlperf] = report.sources
    assert mlperf.status == "partial" and list(mlperf.stale) == ["v5.1"]
    # a first refresh: v5.1 has nothing to keep, and says so
    assert "v5.1 has never loaded" in report.message and "127.0.0.1:9" in report.message
    assert "kept its last good" not in report.message
    client = client_for(settings)
    assert client.get("/v1/results", params={"round": "v6.1", "division": "all",
                                    "availability": "all"}).json()["total"] == 492
    health = {s["source"]: s for s in client.get("/healthz").json()["sources"]}
    assert health["mlperf"]["stale"] and "v5.1" in health["mlperf"]["message"]

    header_only = body.split(b"\n", 1)[0] + b"\n"
    server.files["/v6.1.csv"] = header_only  # a round that had rows comes back empty
    report = refresh(settings)
    assert report.status == "failed" and "v6.1" in report.message
    assert "no results" in report.message
    client = client_for(settings)
    assert client.get("/v1/results", params={"round": "v6.1", "division": "all",
                                    "availability": "all"}).json()["total"] == 492


def test_a_shrunk_round_is_refused_while_another_round_lands(tmp_path, server, client_for):
    body = SUMMARY_CSV.read_bytes()
    server.files["/v6.1.csv"] = body
    rounds = f'rounds = {{ "v5.1" = "{V51_JSON}", "v6.1" = "{server.url("/v6.1.csv")}" }}'
    settings = make_settings(tmp_path, write_sources(tmp_path / "sources.toml", mlperf=rounds))
    assert refresh(settings).status == "published"
    lines = body.split(b"\n")
    server.files["/v6.1.csv"] = b"\n".join(lines[:100]) + b"\n"  # 99 of 492 rows
    report = refresh(settings)
    assert report.status == "failed" and "v6.1" in report.message and "--accept-shrink" in \
        report.message
    assert client_for(settings).get("/v1/results", params={"round": "v6.1", "division": "all",
                                    "availability": "all"}).json()["total"] == 492


def test_unmapped_accelerator_names_are_reported_and_warned(tmp_path):
    record = {"ID": "9.9-1", "Submitter": "Acme", "Availability": "available",
              "Category": "closed", "Suite": "datacenter", "System": "Box", "Platform": "box",
              "UsedModel": "llama2-70b-99", "Model": "llama2-70b-99", "Scenario": "Offline",
              "Nodes": 1, "Accelerator": "NVIDIA Z900-SXM-512GB", "a#": 8, "version": "v9.9",
              "Performance_Result": 100.0, "Performance_Units": "Tokens/s"}
    spelled = dict(record, Platform="h100box", Accelerator="NVIDIA H100-SXM-80GB")
    path = tmp_path / "v9.9.json"
    path.write_text(json.dumps([record, spelled]))
    sources = full_sources(tmp_path / "sources.toml", mlperf=f'rounds = {{ "v9.9" = "{path}" }}')
    report = refresh(make_settings(tmp_path, sources))
    assert report.status == "published"
    assert report.coverage["unmapped_names"] == ["NVIDIA Z900-SXM-512GB"]
    assert report.coverage["accelerators_by_round"]["v9.9"]["unmapped"] == {
        "NVIDIA Z900-SXM-512GB": 1}
    assert report.coverage["rows_mapped"] == 1  # the H100 spelling, by its curated alias
    [warning] = [v for v in report.validation
                 if v["expectation"] == "mlperf_result: every single-accelerator row maps to an "
                                        "accelerator id"]
    assert warning["severity"] == "warning" and not warning["success"]
    assert warning["unexpected_count"] == 1 and "Z900" in warning["sample"]


def test_every_round_of_the_defaults_is_pinned_and_its_format_left_to_the_bytes():
    from ingest.mlperf.load import DEFAULT_ROUNDS, PinnedRound

    assert set(DEFAULT_ROUNDS) == {"v4.1", "v5.1", "v6.0", "v6.1"}
    for name, spec in DEFAULT_ROUNDS.items():
        assert isinstance(spec, PinnedRound) and spec.sha256 is not None  # bytes pinned too
        assert spec.url.endswith("/summary.csv" if name == "v6.1" else "/summary_results.json")
        assert len(spec.url.split("/")[-2]) == 40  # a commit, not a branch


def test_rows_from_an_earlier_parser_are_read_again(tmp_path, monkeypatch):
    """A snapshot whose rows came from another parser version is re-parsed from the raw store
    even when the file has not changed, so new columns get filled."""
    import importlib

    mlperf_load = importlib.import_module("ingest.mlperf.load")  # the module, not load()

    sources = full_sources(tmp_path / "sources.toml",
                           mlperf=f'rounds = {{ "v6.1" = "{SUMMARY_CSV}" }}')
    settings = make_settings(tmp_path, sources)
    assert refresh(settings).status == "published"
    assert refresh(settings).status == "unchanged"
    monkeypatch.setattr(mlperf_load, "PARSER_VERSION", "mlperf-summary/next")
    report = refresh(settings)
    assert report.status == "published"
    assert report.sources[1].details["v6.1"]["status"] == "updated"


def test_a_dual_gpu_board_is_two_gpus_per_accelerator(rounds_client, v51):
    """v5.1's 1-node-4x-BMG-Pro-B60-Dual: MLPerf counts 4 accelerators (a#), each a board with
    two Arc Pro B60 GPUs (data/accelerators.yaml gpus_per_unit 2, sourced): per_accelerator
    stays the publisher's count, per_gpu and gpus count every GPU. (The frontier's MLPerf
    points divide by the same GPUs, derived.GPUS; no carried non-MLPerf source has a
    llama2-70b series to overlay them on.)"""
    raw = [r for r in v51 if "B60 Dual" in r["Accelerator"]
           and r["Performance_Units"] == "Tokens/s" and r["Category"] == "closed"]
    assert raw and {r["a#"] for r in raw} == {1, 4}  # the 4-board system, and a 1-board one
    per = {(r["model_id"], r["scenario"]): r for r in all_rows(
        rounds_client, "/v1/per-accelerator", round="v5.1", division="all",
        availability="all", accelerator="intel-arc-pro-b60-dual-48gb")}
    for r in raw:
        row = next(x for x in per.values() if x["scenario"] == r["Scenario"]
                   and x["result"] == r["Performance_Result"])
        boards = r["a#"]
        assert row["per_accelerator"] == pytest.approx(r["Performance_Result"] / boards)
        assert (row["gpus"], row["per_gpu"]) == (
            2 * boards, pytest.approx(r["Performance_Result"] / (2 * boards)))
    # a one-GPU accelerator: gpus is its count, per_gpu its per_accelerator
    h = all_rows(rounds_client, "/v1/per-accelerator", round="v5.1", model="llama2-70b",
                 scenario="Offline", accelerator="nvidia-h200")
    assert h and all(x["gpus"] == x["total_accelerators"]
                     and x["per_gpu"] == x["per_accelerator"] for x in h)
