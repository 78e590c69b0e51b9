"""Derived figures: finite, positive, with lineage to existing rows and an honest basis."""

from __future__ import annotations

from warehouse.quality.suites import Rule, rows


def rules() -> list[Rule]:
    """The derived-view rules."""
    return [
        rows("scenario_ratio: ratios are finite and positive", "scenario_ratio",
             "SELECT * FROM {batch} WHERE NOT (ratio > 0) OR NOT isfinite(ratio)"),
        rows("scenario_ratio: both input rows exist", "scenario_ratio",
             "SELECT * FROM {batch} WHERE offline_result_id NOT IN (SELECT id FROM mlperf_result) "
             "OR other_result_id NOT IN (SELECT id FROM mlperf_result)"),
        rows("derived rows report the weakest evidence among their inputs", "derived_lineage",
             "SELECT * FROM {batch} WHERE NOT contains(reported_basis, weakest_input)"),
    ]
