"""MLPerf results: values, units, normalised sets, the natural key."""

from __future__ import annotations

from ingest.mlperf.rows import NATURAL_KEY
from warehouse.figures.derived import count_contradicted
from warehouse.model.vocabulary import (
    AVAILABILITY,
    DIVISIONS,
    KNOWN_UNITS,
    LATENCY_UNITS,
    POWER_UNITS,
    SCENARIOS,
    STREAM_SCENARIOS,
    THROUGHPUT_SCENARIOS,
    THROUGHPUT_UNITS,
    sql_list,
)
from warehouse.quality.suites import WARNING, Rule, in_set, rows, unique

T = "mlperf_result"


def rules() -> list[Rule]:
    """The rules of this source's tables."""
    return [
        rows("mlperf_result: result is positive and finite", T,
             "SELECT id, result FROM {batch} WHERE NOT (result > 0) OR NOT isfinite(result)"),
        in_set("mlperf_result: units are known", T, "units", KNOWN_UNITS),
        rows("mlperf_result: Offline/Server/Interactive report throughput units", T,
             "SELECT id, scenario, units FROM {batch} WHERE NOT is_power AND scenario IN "
             f"{sql_list(THROUGHPUT_SCENARIOS)} AND units NOT IN {sql_list(THROUGHPUT_UNITS)}"),
        rows("mlperf_result: SingleStream/MultiStream report latency units", T,
             "SELECT id, scenario, units FROM {batch} WHERE NOT is_power AND scenario IN "
             f"{sql_list(STREAM_SCENARIOS)} AND units NOT IN {sql_list(LATENCY_UNITS)}"),
        rows("mlperf_result: power units only on power rows", T,
             f"SELECT id, units FROM {{batch}} WHERE (units IN {sql_list(POWER_UNITS)}) <> is_power"),
        rows("mlperf_result: units corrected where the publisher's checker states them "
             "(ingest/mlperf/units.py; published spelling in extras.units_as_published)", T,
             "SELECT id, mlperf_model, scenario, units, "
             "json_extract_string(extras, '$.units_as_published') AS units_as_published, "
             "json_extract_string(extras, '$.units_corrected_by') AS units_corrected_by "
             "FROM {batch} WHERE json_extract_string(extras, '$.units_as_published') IS NOT NULL",
             severity=WARNING),
        in_set("mlperf_result: scenario is normalised", T, "scenario", SCENARIOS),
        in_set("mlperf_result: division is closed or open", T, "division", DIVISIONS),
        in_set("mlperf_result: availability is available, preview or rdi", T, "availability",
               AVAILABILITY),
        unique("mlperf_result: natural key is unique", T, NATURAL_KEY),
        rows("mlperf_result: total_accelerators = nodes x accelerators per node", T,
             "SELECT id, number_of_nodes, accelerators_per_node, total_accelerators FROM {batch} "
             "WHERE number_of_nodes * accelerators_per_node <> total_accelerators",
             severity=WARNING),
        rows("mlperf_result: a count in the accelerator's name (xN) is the system's or a "
             "node's accelerators", T,
             "SELECT id, accelerator_model_name, platform, number_of_nodes, accelerators_per_node, "
             "total_accelerators FROM {batch} WHERE " + count_contradicted(),
             severity=WARNING),
        rows("mlperf_result: every single-accelerator row maps to an accelerator id", T,
             "SELECT id, accelerator_model_name FROM {batch} "
             "WHERE accelerator_mix = 'single' AND accelerator_id IS NULL", severity=WARNING),
        rows("mlperf_result: no accelerator name fits several ids (ambiguous, not guessed)", T,
             "SELECT id, accelerator_model_name, accelerator_candidates FROM {batch} "
             "WHERE accelerator_match = 'ambiguous'", severity=WARNING),
    ]
