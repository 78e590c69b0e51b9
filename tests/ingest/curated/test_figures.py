"""Datasheet figures in data/hardware.yaml (issue #35): every one names its source page, the
date it was read and the words it was read from; a page that only reproduces the vendor's table
says so (cited_via); dense and sparse never mix; the catalogued accelerators they describe exist."""

from __future__ import annotations

import math
import re
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


NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
# A derived figure's note: "<what> = <input as quoted> <unit> / <divisor> [/ <divisor>...]".
DERIVED = re.compile(r"= (\d[\d,]*(?:\.\d+)?) ?([kMGTPE]?)i?(?:B|B/s|FLOPS)((?: / \d+)+)")
PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in NUMBER.findall(text)]


def _quoted(value: float, quote: str) -> bool:
    """The figure is one of the quote's numbers at a decimal or binary unit prefix."""
    scales = [10.0 ** (3 * k) for k in range(7)] + [2.0 ** (10 * k) for k in range(1, 7)]
    return any(math.isclose(value / scale, n, rel_tol=1e-9)
               for scale in scales for n in _numbers(quote))


def _derived_from_quote(value: float, note: str, quote: str) -> bool:
    """The note derives the figure from a number its quote holds: that number (with its unit
    prefix) over the note's divisors is the figure (to 0.5 %: "13.4 TB / 72, about 186 GB")."""
    found = DERIVED.search(note)
    if not found:
        return False
    number, prefix, divisors = found.groups()
    if number not in quote:
        return False
    result = float(number.replace(",", "")) * PREFIX[prefix]
    for d in _numbers(divisors):
        result /= d
    return math.isclose(result, value, rel_tol=0.005)


NUMBERED = [(h, s) for h, s in FIGURES if "value" in s]


@pytest.mark.parametrize("hardware_id, spec", NUMBERED,
                         ids=[f"{h}:{s['metric']}" for h, s in NUMBERED])
def test_every_figure_is_in_its_quote_or_derived_from_a_quoted_input(hardware_id, spec):
    # "a number with no source stays empty": a quote that does not hold the figure (or, for a
    # derived one, its input) is no source for it
    value, quote = float(spec["value"]), spec["source"]["quote"]
    assert _quoted(value, quote) or _derived_from_quote(value, spec.get("note") or "", quote), \
        f"{hardware_id}:{spec['metric']} = {spec['value']} is not in its quote {quote!r}"


@pytest.mark.parametrize(("value", "quote", "note", "holds"), [
    (80e9, "3.35 TB/s", "", False),  # a sibling's quote
    (1979e12, "3,958 TFLOPS of FP8 with sparsity", "dense = sparse / 2", False),  # no input
    (1979e12, "3,958 TFLOPS of FP8 with sparsity", "dense = 3,958 TFLOPS / 2", True),
    (5000e12, "13.4 TB ... 576 TB/s ... 72 GPUs", "per GPU = 720 PFLOPS / 72 / 2", False),
    (5000e12, "720 PFLOPS sparse FP8", "per GPU = 720 PFLOPS / 72 / 2", True),
    (360e15, "720 PFLOPS sparse FP8", "dense = 720 PFLOPS / 3", False),  # wrong arithmetic
    (545259520, "520 MiB of on-chip SRAM", "", True),
])
def test_the_quote_rule_catches_a_figure_its_quote_does_not_hold(value, quote, note, holds):
    assert (_quoted(value, quote) or _derived_from_quote(value, note, quote)) is holds


def test_the_file_parses_and_dense_and_sparse_are_separate_metrics():
    parsed = HardwareFile.model_validate(HARDWARE)
    for h in parsed.hardware:
        for s in h.specs:
            if "flops" in s.metric:
                assert s.metric.endswith(("_dense", "_sparse")) or s.metric == "peak_ai_flops"


def test_a_figure_whose_source_does_not_say_dense_or_sparse_is_peak_ai_flops():
    # Groq LPX's "315 PFLOPS of FP8 inference compute" and the WSE-3 Turbo's "250 petaflops"
    # say neither: a dense or sparse metric would claim what the quote does not
    unstated = {(h, s["metric"]) for h, s in FIGURES if "flops" in s["metric"]
                and re.search(r"sparsity not stated|sparse or dense", s.get("note") or "")}
    assert unstated == {("groq-lpx-rack", "peak_ai_flops"),
                        ("cerebras-wse-3-turbo", "peak_ai_flops")}


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
