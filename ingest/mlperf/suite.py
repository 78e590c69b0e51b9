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
    Revision,
    sql_list,
)
from warehouse.quality.suites import WARNING, Rule, in_set, rows, unique

T = "mlperf_result"
R = "mlperf_result_revision"


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
        *revision_rules(),
    ]


def revision_rules() -> list[Rule]:
    """Kept versions: a state from the vocabulary, dates in order, the version the row it
    keeps, and a rename that leads somewhere (a link to the old id redirects along it)."""
    return [
        in_set(f"{R}: status is revised, withdrawn or renamed", R, "status",
               [s.value for s in Revision]),
        rows(f"{R}: valid_from <= valid_to", R,
             "SELECT id, valid_from, valid_to FROM {batch} WHERE valid_from > valid_to"),
        rows(f"{R}: the kept version is the result's own row", R,
             "SELECT id, result_id, json_extract_string(version, '$.id') AS version_id "
             "FROM {batch} WHERE json_extract_string(version, '$.id') IS DISTINCT FROM result_id "
             "OR json_extract_string(version, '$.round') IS DISTINCT FROM round"),
        rows(f"{R}: renamed_to is set exactly on renames, never to the id itself", R,
             "SELECT id, status, renamed_to FROM {batch} WHERE (status = "
             f"'{Revision.renamed}') <> (renamed_to IS NOT NULL) OR renamed_to = result_id"),
        rows(f"{R}: a rename leads to a result of its round, stored or kept", R,
             # a JOIN: great-expectations then leaves {batch} for this query to alias
             "SELECT v.id, v.round, v.renamed_to FROM {batch} v LEFT JOIN (SELECT id, round "
             "FROM mlperf_result UNION SELECT result_id, round FROM mlperf_result_revision) k "
             "ON k.id = v.renamed_to AND k.round = v.round "
             "WHERE v.renamed_to IS NOT NULL AND k.id IS NULL"),
    ]
