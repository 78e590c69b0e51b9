"""The evidence vocabulary: the one place the labels and their strength are defined.

Strength orders how much a figure can be trusted as a measurement of the thing it describes;
a derived figure reports the *weakest* label among its inputs, so a ratio of two vendor claims
never looks like a measurement.
"""

from __future__ import annotations

from enum import StrEnum


class Evidence(StrEnum):
    """What kind of evidence a row is. Closed vocabulary; see DESIGN.md."""

    measured = "measured"
    third_party_measured = "third_party_measured"
    vendor_measured = "vendor_measured"
    vendor_claim = "vendor_claim"
    vendor_projection = "vendor_projection"
    paper_reported = "paper_reported"
    vendor_spec = "vendor_spec"
    list_price = "list_price"
    benchmark_rule = "benchmark_rule"
    assumption = "assumption"
    derived = "derived"


DESCRIPTIONS: dict[Evidence, str] = {
    Evidence.measured: "result of an audited cross-vendor benchmark (MLPerf)",
    Evidence.third_party_measured: "an independent measurement quoted with its measurer",
    Evidence.vendor_measured: "the vendor's own measurement in a paper or report",
    Evidence.vendor_claim: "a dated vendor speed/price claim",
    Evidence.vendor_projection: "a claim the vendor itself marks as projected/unreleased",
    Evidence.paper_reported: "a research paper's authors reporting on their own technique",
    Evidence.vendor_spec: "datasheet peak figures",
    Evidence.list_price: "a published price, with the date it was observed",
    Evidence.benchmark_rule: "a limit set by the benchmark's rules",
    Evidence.assumption: "an input the user or the docs choose",
    Evidence.derived: "computed from other rows; lists its inputs and their labels",
}

# Labels a curated file may carry. Only the MLPerf ingester writes `measured`.
CURATED_LABELS = frozenset(Evidence) - {Evidence.measured, Evidence.derived}

# Higher is stronger evidence of what a system actually does. Facts that are not
# performance evidence (specs, prices, rules) rank with measurements: they are what they are.
STRENGTH: dict[Evidence, int] = {
    Evidence.measured: 6,
    Evidence.list_price: 6,
    Evidence.benchmark_rule: 6,
    Evidence.vendor_spec: 5,
    Evidence.third_party_measured: 4,
    Evidence.vendor_measured: 3,
    Evidence.paper_reported: 3,
    Evidence.vendor_claim: 2,
    Evidence.assumption: 1,
    Evidence.vendor_projection: 0,
    Evidence.derived: 0,
}


def basis(*labels: str) -> str:
    """The basis a derived row reports: ``derived: a + b`` over its distinct input labels,
    strongest first, so the weakest is always visible (e.g. ``derived: measured + assumption``).
    """
    distinct = sorted({Evidence(x) for x in labels}, key=lambda e: (-STRENGTH[e], e.value))
    return "derived: " + " + ".join(e.value for e in distinct)


def weakest(*labels: str) -> str:
    """The weakest label among the inputs."""
    return min((Evidence(x) for x in labels), key=lambda e: (STRENGTH[e], e.value)).value
