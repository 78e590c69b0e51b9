"""Self-measured runs beside InferenceX and MLPerf on the API: /v1/observations labels them,
/v1/frontier draws them as their own series with MLPerf on the same axes and prices them."""

from __future__ import annotations

import pytest

from ingest.refresh import refresh
from ingest.selfmeasured.load import Statement, import_spec
from tests.conftest import make_settings
from tests.helpers import copy_data_dir
from tests.ingest.selfmeasured.cases import VLLM

STATED = Statement("nvidia-h100-sxm", 8, "gpt-oss-120b", framework="vllm", precision="mxfp4")


@pytest.fixture
def client(frontier_warehouse, tmp_path, client_for):
    copy_data_dir(frontier_warehouse / "var", tmp_path / "var")
    settings = make_settings(tmp_path, frontier_warehouse / "sources.toml")
    assert refresh(settings, specs=[import_spec([VLLM], STATED)]).status == "published"
    return client_for(settings)


def test_observations_carry_both_sources_labelled(client):
    rows = client.get("/v1/observations", params={"limit": 1000}).json()["rows"]
    sources = {r["source"] for r in rows}
    assert sources == {"inferencex", "self_measured"}
    mine = [r for r in rows if r["source"] == "self_measured"]
    assert len(mine) == 1
    r = mine[0]
    assert (r["evidence"], r["tool"], r["accelerator_id"], r["gpus"], r["model_id"]) == (
        "self_measured", "vllm", "nvidia-h100-sxm", 8, "gpt-oss-120b")
    assert r["output_tput_per_gpu"] == pytest.approx(3386.194265821373 / 8)
    assert r["file_sha256"] == "3eef7d22e0dfb302e8a36273fe734fb66bb5f92ee51ce6346ae246551f47d5a9"
    assert r["gpu_count_basis"].startswith("stated at import")


def test_the_frontier_draws_the_self_measured_series_beside_mlperf_and_prices_it(client):
    # MLPerf v6.1 has no gpt-oss-120b result on H100: ask for B200 beside it
    page = client.get("/v1/frontier", params={
        "model": "gpt-oss-120b", "isl": 1024, "osl": 128, "rate": 10, "limit": 1000,
        "accelerator": ["nvidia-h100-sxm", "nvidia-b200-sxm-180gb"]}).json()["rows"]
    mine = [r for r in page if r.get("source") == "self_measured" and r["kind"] == "frontier"]
    assert len(mine) == 1
    point = mine[0]
    assert point["series"] == "nvidia-h100-sxm (self-measured, vLLM)"
    assert point["evidence"] == "self_measured"
    assert point["interactivity"] == pytest.approx(1000 / 18.048549724415526)
    y = 3386.194265821373 / 8
    assert point["output_tput_per_gpu"] == pytest.approx(y)
    assert point["cost_per_million_tokens"] == pytest.approx(10 / (y * 3600) * 1e6)
    assert point["cost_basis"] == "derived: self_measured + assumption"
    assert "vLLM bench serve" in point["notice"]
    mlperf = [r for r in page if r["kind"] == "mlperf"]
    assert mlperf, "MLPerf gpt-oss-120b results on the same axes"
    assert {r["accelerator_id"] for r in mlperf} == {"nvidia-b200-sxm-180gb"}
    assert all(r["lengths_match"] is False for r in mlperf)


def test_mlperf_of_another_accelerator_can_sit_beside_the_run(client):
    # mlperf_accelerator overlays MLPerf results without filtering the lines drawn
    base = {"model": "gpt-oss-120b", "isl": 1024, "osl": 128, "limit": 1000}
    alone = client.get("/v1/frontier", params=base).json()["rows"]
    assert [r["kind"] for r in alone] == ["frontier"]  # MLPerf has no gpt-oss-120b on H100
    beside = client.get("/v1/frontier", params={
        **base, "mlperf_accelerator": "B200"}).json()["rows"]
    assert [r["id"] for r in beside if r["kind"] == "frontier"] == [alone[0]["id"]]
    ml = [r for r in beside if r["kind"] == "mlperf"]
    assert ml and {r["accelerator_id"] for r in ml} == {"nvidia-b200-sxm-180gb"}


def test_costs_price_the_run_beside_inferencex_and_mlperf(client):
    kinds = ["measured", "third_party_measured", "self_measured"]
    base = {"model": ["gpt-oss-120b", "deepseek-r1"], "basis": "assumed", "rate": 10,
            "limit": 1000, "division": "all", "availability": "all"}
    rows = client.get("/v1/costs", params={**base, "evidence": kinds}).json()["rows"]
    by_kind = {k: [r for r in rows if r["evidence"] == k] for k in kinds}
    assert all(by_kind.values()), {k: len(v) for k, v in by_kind.items()}
    [mine] = by_kind["self_measured"]
    y = 3386.194265821373 / 8  # output tokens/s per GPU of the run, every GPU (8) charged
    assert (mine["accelerator_id"], mine["total_accelerators"], mine["conc"]) == (
        "nvidia-h100-sxm", 8, 100)
    assert mine["cost_per_million_tokens"] == pytest.approx(10 / (y * 3600) * 1e6)
    assert mine["result"] == pytest.approx(3386.194265821373)
    assert mine["basis"] == "derived: self_measured + assumption"
    assert mine["file_name"] and "vLLM bench serve" in mine["notice"]
    assert mine["round"] is None and mine["mlperf_id"] is None
    for r in by_kind["third_party_measured"]:  # per every GPU, as the observation says
        assert r["basis"] == "derived: third_party_measured + assumption" and r["run_url"]
        assert r["cost_per_million_tokens"] == pytest.approx(
            10 * r["total_accelerators"] / (r["result"] * 3600) * 1e6)
    ix = client.get("/v1/observations", params={"limit": 1000}).json()["rows"]
    current = {o["id"]: o for o in ix if o["source"] == "inferencex" and o["current"]
               and o["reconciled"] and o["gpus"]
               and o["model_id"] == "deepseek-r1" and (o["output_tput_per_gpu"] or 0) > 0}
    for r in by_kind["third_party_measured"]:
        o = current[r["result_id"]]
        assert r["result"] == pytest.approx(o["output_tput_per_gpu"] * o["gpus"])
    assert len(by_kind["third_party_measured"]) == len(current)
    for r in by_kind["measured"]:
        assert r["basis"] == "derived: measured + assumption" and r["details_url"]
    # the default is MLPerf's results alone, as before; round filters MLPerf's rows only
    default = client.get("/v1/costs", params=base).json()["rows"]
    assert {r["evidence"] for r in default} == {"measured"}
    assert len(default) == len(by_kind["measured"])
    v61 = client.get("/v1/costs", params={**base, "evidence": kinds, "round": "v6.1"}).json()
    assert {r["evidence"] for r in v61["rows"]} == set(kinds)
    assert all(r["round"] in ("v6.1", None) for r in v61["rows"])


def test_costs_of_runs_alone_on_the_list_price_basis_say_no_price_where_azure_has_none(client):
    rows = client.get("/v1/costs", params={"evidence": "self_measured", "basis": "list_price",
                                           "limit": 10}).json()["rows"]
    assert [(r["evidence"], r["price_basis"]) for r in rows] == [("self_measured", "list_price")]
    assert rows[0]["basis"] == "derived: list_price + self_measured"
    bad = client.get("/v1/costs", params={"evidence": "vendor_claim"})
    assert bad.status_code == 422 and "evidence" in bad.text


def test_every_run_of_an_import_is_on_its_curve_whatever_day_it_ran(frontier_warehouse,
                                                                    tmp_path, client_for):
    """An import is one sweep: a vLLM --append-result file whose second run was written after
    midnight keeps both runs on its curve (each InferenceX configuration keeps its latest run
    only; an import is its own configuration, and its runs are points, not repeats)."""
    import json

    run = json.loads(VLLM.read_bytes())
    faster = {**run, "date": "20260130-001500", "median_tpot_ms": run["median_tpot_ms"] / 2,
              "output_throughput": run["output_throughput"] / 2}
    sweep = tmp_path / "sweep.jsonl"
    sweep.write_text(json.dumps(run) + "\n" + json.dumps(faster) + "\n")
    copy_data_dir(frontier_warehouse / "var", tmp_path / "var")
    settings = make_settings(tmp_path, frontier_warehouse / "sources.toml")
    assert refresh(settings, specs=[import_spec([sweep], STATED)]).status == "published"
    page = client_for(settings).get("/v1/frontier", params={
        "model": "gpt-oss-120b", "isl": 1024, "osl": 128, "limit": 1000,
        "accelerator": "nvidia-h100-sxm"}).json()["rows"]
    mine = sorted((r["observed_on"], r["interactivity"]) for r in page
                  if r.get("source") == "self_measured" and r["kind"] == "frontier")
    assert mine == [("2026-01-29", pytest.approx(1000 / run["median_tpot_ms"])),
                    ("2026-01-30", pytest.approx(2000 / run["median_tpot_ms"]))]
