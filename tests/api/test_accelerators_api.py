"""/v1/accelerators and /v1/accelerators/{id} (issue #35) over the real v5.1 JSON and v6.1 CSV:
the catalogue with spellings per round, coverage and gaps; one accelerator's identity, sourced
figures, rounds and Azure SKUs; the derived figures per TB/s and per kW of nameplate power in
/v1/per-accelerator and /v1/trends; coverage in /healthz. Expected values come from the files
and from data/."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml

from tests.helpers import REPO, V51_JSON

CATALOGUE = yaml.safe_load((REPO / "data" / "accelerators.yaml").read_text())


def all_rows(client, path: str, **params) -> list[dict]:
    rows, offset = [], 0
    while True:
        body = client.get(path, params={**params, "limit": 1000, "offset": offset}).json()
        rows += body["rows"]
        if not body["next"]:
            return rows
        offset += 1000


@pytest.fixture(scope="module")
def v51() -> list[dict]:
    return json.loads(V51_JSON.read_text())


def test_the_catalogue_lists_every_id_with_spellings_per_round_and_coverage(rounds_client, v51):
    body = rounds_client.get("/v1/accelerators").json()
    rows = {r["id"]: r for r in body["rows"]}
    assert set(rows) == {a["id"] for a in CATALOGUE["accelerators"]}
    for rnd in ("v5.1", "v6.1"):
        cov = body["coverage"][rnd]
        assert cov["rows_mapped"] / cov["rows_with_accelerator"] >= 0.99
        assert cov["rows_mapped"] + cov["rows_unmapped"] + cov["rows_ambiguous"] \
            == cov["rows_with_accelerator"]
    assert body["unmapped"] == [] and body["ambiguous"] == []
    # the virtualized H200 of v5.1 is the H200, found by its identity, with its row count
    h200 = {(s["round"], s["name"]): s for s in rows["nvidia-h200"]["spellings"]}
    virtual = h200[("v5.1", "Virtualized NVIDIA H200-SXM-141GB")]
    rows_in_file = sum(1 + ("Power_Result" in r) for r in v51
                       if r["Accelerator"] == "Virtualized NVIDIA H200-SXM-141GB")
    assert virtual["match"] == "identity" and virtual["rows"] == rows_in_file
    assert virtual["decorations"] == "virtualized"
    assert virtual["identity"] == "NVIDIA h200 | SXM | 141GB"
    # gaps: what the catalogue has no sourced figure for, listed, never filled
    empty = "nvidia-rtx-pro-4500-blackwell"
    assert rows[empty]["figures"] == 0
    assert body["gaps"][empty] == rows[empty]["gaps"] == [
        "memory_capacity", "memory_type", "memory_bandwidth", "flops_fp8_dense",
        "flops_bf16_dense", "tdp", "form_factor", "launch_date"]
    # AMD's ROCm blog gives the MI355X's memory and bandwidth only: the rest stays listed
    assert rows["amd-mi355x"]["figures"] == 3
    assert body["gaps"]["amd-mi355x"] == [
        "flops_fp8_dense", "flops_bf16_dense", "tdp", "form_factor", "launch_date"]
    # NVIDIA's docs give the GB300's memory and nothing else: the rest stays listed
    assert rows["nvidia-gb300"]["figures"] == 2
    assert body["gaps"]["nvidia-gb300"] == [
        "memory_bandwidth", "flops_fp8_dense", "flops_bf16_dense", "tdp", "form_factor",
        "launch_date"]
    assert body["gaps"]["amd-mi300x"] == ["tdp", "launch_date"]


def test_one_accelerator_has_identity_sourced_figures_rounds_and_skus(rounds_client, v51):
    body = rounds_client.get("/v1/accelerators/amd-mi300x").json()
    assert body["identity"] == ["AMD mi300x | - | 192GB"]
    figures = {f["metric"]: f for f in body["figures"]}
    assert set(figures) == {"memory_capacity", "memory_type", "memory_bandwidth",
                            "flops_fp8_dense", "flops_bf16_dense", "form_factor"}
    for f in figures.values():
        assert f["source_url"].startswith("https://www.amd.com/") and f["quote"]
        assert f["evidence"] == "vendor_spec" and f["checked_on"]
    assert figures["memory_bandwidth"]["display_value"] == pytest.approx(5.3)
    assert figures["memory_bandwidth"]["display_unit"] == "TB/s"
    assert figures["flops_fp8_dense"]["display_value"] == pytest.approx(2614.9)
    assert figures["memory_type"]["value_text"] == "HBM3"
    assert body["gaps"] == ["tdp", "launch_date"]
    rounds = {r["round"]: r for r in body["rounds"]}
    mi300x = [r for r in v51 if r["Accelerator"] == "AMD Instinct MI300X 192GB HBM3"]
    assert rounds["v5.1"]["results"] == len(mi300x)
    assert rounds["v5.1"]["divisions"] == sorted({r["Category"] for r in mi300x})
    assert {"sku": "Standard_ND96isr_MI300X_v5", "accelerators": 8} in body["azure_skus"]
    assert rounds_client.get("/v1/accelerators/nvidia-h999").status_code == 404


def test_a_secondary_page_figure_says_so(rounds_client):
    figures = {f["metric"]: f for f in
               rounds_client.get("/v1/accelerators/nvidia-l40s").json()["figures"]}
    assert figures["tdp"]["value"] == 350 and figures["tdp"]["unit"] == "W"
    assert figures["tdp"]["cited_via"] == figures["tdp"]["source_url"]
    assert figures["tdp"]["vendor_url"] is None


def test_per_accelerator_figures_per_tbs_and_per_nameplate_kw(rounds_client):
    rows = all_rows(rounds_client, "/v1/per-accelerator", accelerator="amd-mi300x",
                    round="v5.1")
    assert rows
    for r in rows:
        assert r["memory_bandwidth_tbs"] == pytest.approx(5.3)
        assert r["per_accelerator_per_tbs"] == pytest.approx(r["per_accelerator"] / 5.3)
        assert r["bandwidth_spec_id"] == "amd-mi300x:memory_bandwidth"
        assert r["nameplate_power_w"] is None and r["per_accelerator_per_nameplate_kw"] is None
        assert r["basis"] == "derived: measured + vendor_spec"
        assert r["weakest_input"] == "vendor_spec"
    l40s = all_rows(rounds_client, "/v1/per-accelerator", accelerator="nvidia-l40s")
    assert l40s
    for r in l40s:
        assert r["per_accelerator_per_nameplate_kw"] == pytest.approx(r["per_accelerator"] / 0.35)
        assert r["per_accelerator_per_tbs"] == pytest.approx(r["per_accelerator"] / 0.864)
    # an accelerator without datasheet figures keeps the measured basis and no derived figure
    rtx_pro_4500 = all_rows(rounds_client, "/v1/per-accelerator",
                            accelerator="nvidia-rtx-pro-4500-blackwell")
    assert rtx_pro_4500 and all(r["per_accelerator_per_tbs"] is None
                                and r["basis"] == "derived: measured" for r in rtx_pro_4500)
    # a memory-size figure alone is not a figure the view divides by: the basis stays measured
    gb300 = all_rows(rounds_client, "/v1/per-accelerator", accelerator="nvidia-gb300")
    assert gb300 and all(r["per_accelerator_per_tbs"] is None and r["bandwidth_spec_id"] is None
                         and r["basis"] == "derived: measured" for r in gb300)


def test_the_trend_takes_the_best_over_every_spelling_of_the_accelerator(rounds_client):
    """v5.1 has the H200 both plain and virtualized: the trend's best per round is the best of
    all its rows, whatever the spelling."""
    per = all_rows(rounds_client, "/v1/per-accelerator", accelerator="nvidia-h200",
                   round="v5.1", division="all", availability="all")
    assert {r["accelerator_model_name"] for r in per} == {
        "NVIDIA H200-SXM-141GB", "Virtualized NVIDIA H200-SXM-141GB"}
    best: dict[tuple, float] = {}
    spellings: dict[tuple, set] = {}
    for r in per:
        key = (r["model_family"], r["scenario"], r["units"])
        best[key] = max(best.get(key, 0.0), r["per_accelerator"])
        spellings.setdefault(key, set()).add(r["accelerator_model_name"])
    trend = all_rows(rounds_client, "/v1/trends", accelerator="nvidia-h200", round="v5.1",
                     division="all", availability="all")
    assert {(t["model_family"], t["scenario"], t["units"]) for t in trend} == set(best)
    for t in trend:
        key = (t["model_family"], t["scenario"], t["units"])
        assert t["per_accelerator"] == pytest.approx(best[key])
        assert t["spellings"] == len(spellings[key])
        assert t["per_accelerator_per_tbs"] == pytest.approx(t["per_accelerator"] / 4.8)
    assert any(t["spellings"] == 2 for t in trend)


def test_healthz_shows_accelerator_coverage_per_round(rounds_client, v51):
    body = rounds_client.get("/healthz").json()
    cov = body["accelerators"]["v5.1"]
    singles = Counter(r["Accelerator"] for r in v51 for _ in range(1 + ("Power_Result" in r)))
    mixed = sum(n for name, n in singles.items() if "), " in name or ") and " in name)
    single = sum(n for name, n in singles.items() if name) - mixed
    assert cov["rows_with_accelerator"] == single and cov["rows_mapped"] == single
    assert cov["rows_mixed"] == mixed
    assert set(body["accelerators"]) == {"v5.1", "v6.1"}
