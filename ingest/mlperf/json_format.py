"""MLCommons' ``summary_results.json`` (a list of result objects) → published columns.

Keys are mapped onto the CSV's columns (``KEYS``); keys a record lacks are NULL, unknown keys
are kept in ``extras``. A record with ``Power_Result``/``Power_Units`` also yields a power row,
as the CSV publishes power: the same key with the power units, ``is_power`` true. Failures
name the round, the record index (0-based) and the key.
"""

from __future__ import annotations

from collections.abc import Iterator

from ingest.mlperf.rows import SOURCE, TYPES, KeyGuard, ParseReport, convert, finish
from warehouse.exceptions import ParseError

# JSON key → column of mlperf_result.
KEYS: dict[str, str] = {
    "Submitter": "organization", "Availability": "availability", "Category": "division",
    "Suite": "system_type", "System": "system_name", "Platform": "platform",
    "UsedModel": "model", "Model": "mlperf_model", "Scenario": "scenario_raw",
    "Performance_Result": "result", "Performance_Units": "units", "Accuracy": "accuracy",
    "Nodes": "number_of_nodes", "Processor": "host_processor_model_name",
    "p#": "host_processors_per_node", "host_processors_per_node": "host_processors_per_node",
    "host_processor_core_count": "host_processor_core_count",
    "Accelerator": "accelerator_model_name", "a#": "accelerators_per_node",
    "Total Accelerators": "total_accelerators",
    "Location": "location", "Software": "framework", "operating_system": "operating_system",
    "Notes": "notes", "compliance": "compliance", "errors": "errors", "version": "version",
    "inferred": "inferred", "has_power": "has_power", "weight_data_types": "weight_data_types",
    "ID": "system_id", "Details": "details_url", "Code": "code_url",
}
PUBLISHED = {col: key for key, col in KEYS.items()}
POWER_KEYS = ("Power_Result", "Power_Units")
# Keys whose meaning the parser reads (others go to extras).
_READ = set(KEYS) | set(POWER_KEYS)


def parse(records: list, *, round_name: str, snapshot_id: str,
          report: ParseReport) -> Iterator[dict]:
    """Rows of one JSON summary: a performance row per record, and a power row per record that
    carries a power measurement."""
    where = f"{SOURCE} {round_name}"
    guard = KeyGuard(where)
    unknown_keys: set[str] = set()
    for index, record in enumerate(records):
        at = f"{where}: record {index}"
        if not isinstance(record, dict):
            raise ParseError(f"{at}: not an object ({type(record).__name__})", source=SOURCE,
                             record=index)
        unknown = {k: v for k, v in record.items() if k not in _READ}
        unknown_keys.update(unknown)
        values: dict = dict.fromkeys(TYPES)
        for key, col in KEYS.items():
            if key in record:
                values[col] = convert(record[key], TYPES[col], at, key, record=index)
        row = finish(dict(values), where=at, position=index, snapshot_id=snapshot_id,
                     source_format="json", extras=unknown, published=PUBLISHED, record=index)
        guard.check(row, f"record {index}", record=index)
        yield row
        if record.get("Power_Result") not in (None, ""):
            power = _power(values, record, at=at, index=index, snapshot_id=snapshot_id,
                           extras=unknown)
            guard.check(power, f"record {index} (power)", record=index)
            yield power
    if unknown_keys:
        report.warnings.append(f"{where}: unknown key(s) kept in `extras`: "
                               f"{', '.join(sorted(unknown_keys))}")


def _power(values: dict, record: dict, *, at: str, index: int, snapshot_id: str,
           extras: dict) -> dict:
    """The power row of a record: its published values (never the performance row's derived
    ones, so a total the parser computed is said to be computed here too) with the power
    result and units."""
    power = {**values,
             "result": convert(record["Power_Result"], "float", at, "Power_Result", record=index),
             "units": convert(record.get("Power_Units"), "str", at, "Power_Units", record=index)}
    power = finish(power, where=at, position=index, snapshot_id=snapshot_id,
                   source_format="json", extras=extras,
                   published={**PUBLISHED, "result": "Power_Result", "units": "Power_Units"},
                   record=index)
    if not power["is_power"]:
        raise ParseError(f"{at}, Power_Units: {power['units']!r} is not a power unit",
                         source=SOURCE, record=index, column="Power_Units")
    return power
