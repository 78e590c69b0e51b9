"""Curated files: the repository's files load and keep the rules; bad files are rejected with
the file, entry and field named."""

from __future__ import annotations

import csv
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from ingest.curated import parse as curated
from ingest.http import Raw
from ingest.mlperf import rows as mlperf
from tests.helpers import REPO, SUMMARY_CSV
from warehouse.exceptions import CuratedFileError

DATA = REPO / "data"


def load_dir(directory: Path) -> dict[str, list[dict]]:
    raws = curated.read_files(directory)
    parsed = {Path(r.url).name: curated.check_file(r) for r in raws}
    return curated.rows(parsed, {n: "s" for n in curated.FILES})


@pytest.fixture(scope="module")
def tables():
    return load_dir(DATA)


def test_every_claim_is_sourced_dated_and_not_measured(tables):
    assert len(tables["claim"]) >= 25
    for c in tables["claim"]:
        assert c["source_url"].startswith("https://"), c["id"]
        assert c["checked_on"] is not None
        assert c["evidence"] not in ("measured", "derived")
        if c["evidence"] in ("vendor_claim", "vendor_projection"):
            assert c["claimed_on"] is not None, c["id"]


def test_seed_figures_are_present(tables):
    claims = {c["id"]: c for c in tables["claim"]}
    assert claims["cerebras-llama3.1-405b-969"]["value"] == 969
    assert str(claims["cerebras-llama3.1-405b-969"]["claimed_on"]) == "2024-11-18"
    assert claims["nvidia-gb200-nvl72-30x-realtime"]["evidence"] == "vendor_projection"
    assert "Projected" in claims["nvidia-gb200-nvl72-30x-realtime"]["conditions"]
    assert claims["artificial-analysis-sambanova-405b-132"]["evidence"] == "third_party_measured"
    assert claims["sn40l-paper-llama3.1-405b-129"]["evidence"] == "vendor_measured"
    assert claims["eagle-3-speedup"]["evidence"] == "paper_reported"
    specs = {s["id"]: s for s in tables["hardware_spec"]}
    assert specs["nvidia-h100-sxm:memory_bandwidth"]["value"] == 3.35e12
    assert specs["nvidia-gb200-nvl72:memory_bandwidth"]["value"] == 576e12
    assert specs["cerebras-wse-3:memory_bandwidth"]["value"] == 21e15
    assert specs["groq-lpx-rack:sram_capacity"]["evidence"] == "vendor_projection"
    assert "sparse or dense" in specs["cerebras-wse-3-turbo:peak_ai_flops"]["note"]
    shapes = {m["id"]: m for m in tables["model_shape"]}
    assert shapes["illustrative-1t-moe"]["active_params"] == 32e9
    assert shapes["deepseek-r1"]["params"] is None and "left empty" in shapes["deepseek-r1"]["note"]


def test_every_v61_accelerator_spelling_maps(tables):
    aliases = {a["alias"]: a for a in tables["accelerator_alias"] if a["kind"] == "mlperf_name"}
    with SUMMARY_CSV.open(newline="") as f:
        names = {r["accelerator_model_name"] for r in csv.DictReader(f)}
    missing = sorted(n for n in names if n not in aliases)
    assert missing == []
    for n in names:
        _, mix = mlperf.accelerator_parts(n)
        a = aliases[n]
        assert (a["accelerator_id"] is not None) == (a["mix"] == "single")
        assert a["mix"] == mix, n


def test_azure_skus_have_counts(tables):
    skus = {a["alias"]: a for a in tables["accelerator_alias"] if a["kind"] == "azure_sku"}
    assert skus["Standard_ND96isr_H100_v5"]["count"] == 8
    assert skus["Standard_ND96isr_H100_v5"]["accelerator_id"] == "nvidia-h100-sxm"
    assert skus["Standard_ND96isr_H200_v5"]["accelerator_id"] == "nvidia-h200"
    assert skus["Standard_ND96isr_MI300X_v5"]["count"] == 8


def _edit(tmp_path: Path, name: str, change) -> Path:
    d = tmp_path / "data"
    shutil.copytree(DATA, d)
    doc = yaml.safe_load((d / name).read_text())
    change(doc)
    (d / name).write_text(yaml.safe_dump(doc, sort_keys=False))
    return d


def _claim(doc, claim_id):
    return next(c for c in doc["claims"] if c["id"] == claim_id)


@pytest.mark.parametrize("change, where, what", [
    (lambda d: _claim(d, "cerebras-llama3.1-405b-969").update(evidence="measured"),
     "claims[4] (id cerebras-llama3.1-405b-969).evidence", "only the MLPerf ingester"),
    (lambda d: _claim(d, "cerebras-llama3.1-405b-969").pop("claimed_on"),
     "claims[4] (id cerebras-llama3.1-405b-969)", "claimed_on is required"),
    (lambda d: _claim(d, "cerebras-llama3.1-405b-969").update(evidence="rumour"),
     "claims[4] (id cerebras-llama3.1-405b-969).evidence", "Input should be"),
    (lambda d: _claim(d, "cerebras-llama3.1-405b-969")["source"].update(url="http://x.test"),
     "claims[4] (id cerebras-llama3.1-405b-969).source.url", "https"),
    (lambda d: _claim(d, "cerebras-llama3.1-405b-969")["source"].update(checked_on="2024-01-01"),
     "claims[4] (id cerebras-llama3.1-405b-969)", "after checked_on"),
    (lambda d: _claim(d, "cerebras-llama3.1-405b-969").update(value=-1),
     "claims[4] (id cerebras-llama3.1-405b-969).value", "greater than 0"),
])
def test_bad_claims_file_names_file_entry_field(tmp_path, change, where, what):
    d = _edit(tmp_path, "claims.yaml", change)
    with pytest.raises(CuratedFileError) as e:
        load_dir(d)
    msg = str(e.value)
    assert msg.startswith("curated: claims.yaml: ") and where in msg and what in msg, msg


def test_not_yaml_is_a_clear_error():
    raw = Raw(source="curated", url="data/claims.yaml", body=b"claims: [", fetched_at=datetime.now(UTC))
    with pytest.raises(CuratedFileError, match="claims.yaml: not valid YAML"):
        curated.check_file(raw)


def test_unknown_azure_accelerator_is_rejected(tmp_path):
    d = _edit(tmp_path, "accelerators.yaml",
              lambda doc: doc["azure_skus"][0].update(accelerator_id="nope"))
    with pytest.raises(CuratedFileError, match="accelerator_id 'nope' is not declared"):
        load_dir(d)


def _b60_dual(doc: dict) -> dict:
    return next(a for a in doc["accelerators"] if a["id"] == "intel-arc-pro-b60-dual-48gb")


@pytest.mark.parametrize("change", [
    lambda a: a.pop("gpus_source"),
    lambda a: a["gpus_source"].pop("quote"),
    lambda a: a["gpus_source"].pop("url"),
])
def test_more_than_one_gpu_per_unit_needs_its_source(tmp_path, change):
    d = _edit(tmp_path, "accelerators.yaml", lambda doc: change(_b60_dual(doc)))
    with pytest.raises(CuratedFileError) as e:
        load_dir(d)
    assert "intel-arc-pro-b60-dual-48gb" in str(e.value) and "gpus" in str(e.value), str(e.value)
