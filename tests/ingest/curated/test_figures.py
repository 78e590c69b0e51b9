"""Datasheet figures in data/hardware.yaml (issue #35): every one names its source page, the
date it was read and the words it was read from; a page that only reproduces the vendor's table
says so (cited_via); dense and sparse never mix; the catalogued accelerators they describe exist."""

from __future__ import annotations

from datetime import date

import pytest
import yaml

from ingest.curated.files import TEXT_METRICS, HardwareFile
from tests.helpers import REPO

HARDWARE = yaml.safe_load((REPO / "data" / "hardware.yaml").read_text())
ACCELERATORS = yaml.safe_load((REPO / "data" / "accelerators.yaml").read_text())
FIGURES = [(h["id"], s) for h in HARDWARE["hardware"] for s in h.get("specs", [])]


@pytest.mark.parametrize("hardware_id, spec", FIGURES,
                         ids=[f"{h}:{s['metric']}" for h, s in FIGURES])
def test_every_catalogued_figure_has_url_date_and_quote(hardware_id, spec):
    source = spec["source"]
    assert source["url"].startswith("https://"), hardware_id
    assert isinstance(source["checked_on"], date) and source["checked_on"] <= date.today()
    assert source.get("quote", "").strip(), f"{hardware_id}:{spec['metric']} quotes nothing"
    if source.get("cited_via"):  # the page read is the secondary one: it is the url
        assert source["cited_via"] == source["url"]
    if spec["metric"] in TEXT_METRICS:
        assert spec.get("text") and "value" not in spec
    else:
        assert float(spec["value"]) > 0 and spec["unit"]  # YAML reads 3.35e12 as text


def test_the_file_parses_and_dense_and_sparse_are_separate_metrics():
    parsed = HardwareFile.model_validate(HARDWARE)
    for h in parsed.hardware:
        for s in h.specs:
            if "flops" in s.metric:
                assert s.metric.endswith(("_dense", "_sparse")) or s.metric == "peak_ai_flops"


def test_every_accelerator_with_datasheet_figures_is_catalogued():
    catalogued = {a["id"] for a in ACCELERATORS["accelerators"]}
    described = {h["id"] for h in HARDWARE["hardware"]
                 if h["kind"] == "accelerator" and h.get("specs")}
    assert described - catalogued <= {"cerebras-wse-3-turbo"}  # a claim subject, not in MLPerf
    # the accelerators #35 asked for that have datasheet figures from the vendor or a copy of it
    assert {"amd-mi300x", "amd-mi325x", "nvidia-l40s", "nvidia-h100-pcie",
            "intel-gaudi3"} <= described


def test_a_vendor_spec_without_a_quote_is_refused():
    from pydantic import ValidationError

    entry = {"hardware": [{"id": "x", "name": "X", "vendor": "V", "kind": "accelerator",
                           "specs": [{"metric": "tdp", "value": 100, "unit": "W",
                                      "source": {"title": "t", "url": "https://example.com",
                                                 "checked_on": "2026-01-01"}}]}]}
    with pytest.raises(ValidationError, match="quoted text"):
        HardwareFile.model_validate(entry)
    entry["hardware"][0]["specs"][0]["source"]["quote"] = "100 W"
    HardwareFile.model_validate(entry)
    entry["hardware"][0]["specs"][0].update(metric="form_factor")
    with pytest.raises(ValidationError, match="given as text"):
        HardwareFile.model_validate(entry)
