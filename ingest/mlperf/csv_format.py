"""MLPerf's summary CSV (``summary.csv`` of a round) → published columns, one row per line.

Every column is kept: known ones typed (``HEADERS``), unknown ones in ``extras``. Failures name
the round, the line and the column.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from ingest.mlperf.rows import SOURCE, TYPES, KeyGuard, ParseReport, convert, finish
from warehouse.exceptions import ParseError

# CSV header → column of mlperf_result.
HEADERS: dict[str, str] = {
    "Organization": "organization", "Availability": "availability", "Division": "division",
    "SystemType": "system_type", "SystemName": "system_name", "Platform": "platform",
    "Model": "model", "MlperfModel": "mlperf_model", "Scenario": "scenario_raw",
    "Result": "result", "Accuracy": "accuracy", "number_of_nodes": "number_of_nodes",
    "host_processor_model_name": "host_processor_model_name",
    "host_processors_per_node": "host_processors_per_node",
    "host_processor_core_count": "host_processor_core_count",
    "accelerator_model_name": "accelerator_model_name",
    "accelerators_per_node": "accelerators_per_node", "total_accelerators": "total_accelerators",
    "Location": "location", "framework": "framework", "operating_system": "operating_system",
    "notes": "notes", "compliance": "compliance", "errors": "errors", "version": "version",
    "inferred": "inferred", "has_power": "has_power", "Units": "units",
    "weight_data_types": "weight_data_types", "design_power_watts": "design_power_watts",
    "PrivateID": "private_id",
}
PUBLISHED = {col: header for header, col in HEADERS.items()}
REQUIRED_HEADERS = ("Organization", "Availability", "Division", "SystemName", "Platform", "Model",
                    "Scenario", "Result", "Units", "version")


def looks_like(text: str) -> bool:
    """True when the first line is a CSV header naming at least one MLPerf summary column."""
    first = text.lstrip().split("\n", 1)[0]
    try:
        header = next(csv.reader([first]))
    except (csv.Error, StopIteration):
        return False
    return len(header) > 1 and any(h.strip() in HEADERS for h in header)


def parse(text: str, *, round_name: str, snapshot_id: str, report: ParseReport) -> Iterator[dict]:
    """Rows of one summary CSV. ``ParseError`` for a missing required column (naming it), a line
    with the wrong number of fields, an unreadable value or a duplicate natural key."""
    where = f"{SOURCE} {round_name}"
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise ParseError(f"{where}: the file is empty", source=SOURCE) from None
    except csv.Error as e:
        raise ParseError(f"{where}: header unreadable: {e}", source=SOURCE) from None
    missing = [c for c in REQUIRED_HEADERS if c not in header]
    if missing:
        raise ParseError(f"{where}: required column(s) missing: {', '.join(missing)}; the "
                         f"header has {len(header)} columns", source=SOURCE, column=missing[0])
    unknown = [h for h in header if h not in HEADERS]
    if unknown:
        report.warnings.append(f"{where}: unknown column(s) kept in `extras`: "
                               f"{', '.join(unknown)}")
    absent = [h for h in HEADERS if h not in header]
    if absent:
        report.warnings.append(f"{where}: column(s) not in this file, left NULL"
                               + (" (total_accelerators computed as nodes x accelerators per "
                                  "node)" if "total_accelerators" in absent else "")
                               + f": {', '.join(absent)}")
    guard = KeyGuard(where)
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            raise ParseError(f"{where}: line {reader.line_num}: {e} (is the file truncated?)",
                             source=SOURCE, line=reader.line_num) from None
        line = reader.line_num
        if not fields:
            continue
        if len(fields) != len(header):
            raise ParseError(f"{where}: line {line} has {len(fields)} fields, the header has "
                             f"{len(header)} (truncated or garbage row)", source=SOURCE, line=line)
        values = dict(zip(header, fields, strict=True))
        at = f"{where}: line {line}"
        row = {col: convert(values.get(h), TYPES[col], at, h, line=line)
               for h, col in HEADERS.items()}
        row = finish(row, where=at, position=line, snapshot_id=snapshot_id, source_format="csv",
                     extras={h: values[h] for h in unknown}, published=PUBLISHED, line=line)
        guard.check(row, f"line {line}", line=line)
        yield row
