"""Validation rules for self-measured runs: labelled self_measured, hardware stated, figures sane."""

from __future__ import annotations

from warehouse.quality.suites import Rule, not_null, rows

T = "self_observation"


def rules() -> list[Rule]:
    """The self_observation and self_import rules."""
    return [
        rows("self_observation: every run is labelled self_measured", T,
             "SELECT id, evidence FROM {batch} WHERE evidence <> 'self_measured'"),
        rows("self_observation: the stated accelerator count is at least 1", T,
             "SELECT id, gpus FROM {batch} WHERE gpus IS NULL OR gpus < 1"),
        rows("self_observation: throughput, latency and interactivity are not negative", T,
             "SELECT id FROM {batch} WHERE output_tput < 0 OR total_tput < 0 "
             "OR interactivity < 0 OR ttft_median_s < 0 OR tpot_median_s < 0"),
        rows("self_observation: every run belongs to an import in the warehouse", T,
             "SELECT o.id FROM {batch} o LEFT JOIN self_import i ON i.id = o.import_id "
             "WHERE i.id IS NULL OR i.removed_at IS NOT NULL"),
        not_null("self_observation: every run has the file's sha256", T, "file_sha256"),
    ]
