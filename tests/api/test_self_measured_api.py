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
