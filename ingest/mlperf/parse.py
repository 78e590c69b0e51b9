"""MLPerf Inference results summary CSV (one file per round) → ``mlperf_result`` rows.

``fetch`` returns the raw bytes (or a 304); ``parse`` yields one typed row per CSV line, keeping
every published column, adding normalised columns next to the originals, and failing with the
line number and reason on a row it cannot read.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ingest.http import Raw
from warehouse.exceptions import ParseError
from warehouse.vocabulary import (
    POWER_UNITS,
    SCENARIOS,
    Evidence,
    model_family,
    normalise_model,
    normalise_scenario,
)

SOURCE = "mlperf"
PARSER_VERSION = "mlperf-summary/1"

# CSV header → (column, type). Types: str, int, float, bool.
COLUMNS: dict[str, tuple[str, str]] = {
    "Organization": ("organization", "str"),
    "Availability": ("availability", "str"),
    "Division": ("division", "str"),
    "SystemType": ("system_type", "str"),
    "SystemName": ("system_name", "str"),
    "Platform": ("platform", "str"),
    "Model": ("model", "str"),
    "MlperfModel": ("mlperf_model", "str"),
    "Scenario": ("scenario_raw", "str"),
    "Result": ("result", "float"),
    "Accuracy": ("accuracy", "str"),
    "number_of_nodes": ("number_of_nodes", "int"),
    "host_processor_model_name": ("host_processor_model_name", "str"),
    "host_processors_per_node": ("host_processors_per_node", "int"),
    "host_processor_core_count": ("host_processor_core_count", "str"),
    "accelerator_model_name": ("accelerator_model_name", "str"),
    "accelerators_per_node": ("accelerators_per_node", "int"),
    "total_accelerators": ("total_accelerators", "int"),
    "Location": ("location", "str"),
    "framework": ("framework", "str"),
    "operating_system": ("operating_system", "str"),
    "notes": ("notes", "str"),
    "compliance": ("compliance", "str"),
    "errors": ("errors", "int"),
    "version": ("version", "str"),
    "inferred": ("inferred", "bool"),
    "has_power": ("has_power", "bool"),
    "Units": ("units", "str"),
    "weight_data_types": ("weight_data_types", "str"),
    "design_power_watts": ("design_power_watts", "float"),
    "PrivateID": ("private_id", "str"),
}

# A row cannot be keyed or compared without these.
REQUIRED = ("Organization", "Availability", "Division", "Platform", "Model", "Scenario", "Result",
            "Units", "version")

_NULLS = {"", "None", "none", "NULL", "null", "nan", "NaN"}
_TRUE = {"1", "true", "True", "TRUE", "yes"}
_FALSE = {"0", "false", "False", "FALSE", "no"}

NATURAL_KEY = ("round", "division", "organization", "platform", "model_id", "scenario", "units")


@dataclass
class ParseReport:
    """What parsing noticed that is not an error: unknown columns, odd values."""

    warnings: list[str] = field(default_factory=list)


def accelerator_parts(name: str | None) -> tuple[str | None, str]:
    """(vendor, mix) for an accelerator name: mix is single, mixed or none."""
    if name is None or name.strip().upper() in {"N/A", "NA", "NONE", ""}:
        return None, "none"
    if " + " in name or re.search(r"\) and ", name):
        return None, "mixed"
    first = name.split()[0]
    vendor = {"nvidia": "NVIDIA", "amd": "AMD", "intel(r)": "Intel", "intel": "Intel",
              "google": "Google", "qualcomm": "Qualcomm"}.get(first.lower(), first)
    return vendor, "single"


def result_id(row: dict) -> str:
    """Stable id: sha256 of the natural key, 16 hex digits."""
    key = "\x1f".join(str(row[k]) for k in NATURAL_KEY)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _convert(value: str, kind: str, header: str, line: int) -> object:
    value = value.strip()
    if value in _NULLS:
        return None
    try:
        if kind == "int":
            number = float(value)
            if not number.is_integer():
                raise ValueError(f"{value!r} is not a whole number")
            return int(number)
        if kind == "float":
            number = float(value.replace(",", ""))
            if not math.isfinite(number):
                raise ValueError(f"{value!r} is not a finite number")
            return number
        if kind == "bool":
            if value in _TRUE:
                return True
            if value in _FALSE:
                return False
            raise ValueError(f"{value!r} is not a boolean (0/1/True/False)")
    except ValueError as e:
        raise ParseError(f"{SOURCE}: line {line}, column {header}: {e}", source=SOURCE,
                         line=line, column=header) from None
    return value


def parse(raw: Raw, *, snapshot_id: str, report: ParseReport | None = None) -> Iterator[dict]:
    """Yield typed ``mlperf_result`` rows from one summary CSV.

    Raises ``ParseError`` for a missing required column (naming it), a line with the wrong
    number of fields, an unreadable value or a duplicate natural key, each with its line number.
    """
    report = report if report is not None else ParseReport()
    where = f"{SOURCE} ({raw.url})"
    try:
        text = raw.body.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ParseError(f"{where}: not UTF-8 text at byte {e.start}", source=SOURCE,
                         url=raw.url) from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise ParseError(f"{where}: the file is empty", source=SOURCE, url=raw.url) from None
    except csv.Error as e:
        raise ParseError(f"{where}: header unreadable: {e}", source=SOURCE, url=raw.url) from None
    header = [h.strip() for h in header]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ParseError(
            f"{where}: required column(s) missing: {', '.join(missing)}; "
            f"the header has {len(header)} columns", source=SOURCE, url=raw.url,
            column=missing[0])
    unknown = [h for h in header if h not in COLUMNS]
    if unknown:
        report.warnings.append(
            f"{SOURCE}: unknown column(s) kept in `extras`: {', '.join(unknown)}")
    absent = [c for c in COLUMNS if c not in header]
    if absent:
        report.warnings.append(f"{SOURCE}: column(s) not in this file, left NULL: "
                               f"{', '.join(absent)}")

    seen: dict[str, int] = {}
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
            raise ParseError(
                f"{where}: line {line} has {len(fields)} fields, the header has {len(header)} "
                "(truncated or garbage row)", source=SOURCE, line=line)
        values = dict(zip(header, fields, strict=True))
        row: dict[str, object] = {col: None for col, _ in COLUMNS.values()}
        for h, (col, kind) in COLUMNS.items():
            if h in values:
                row[col] = _convert(values[h], kind, h, line)
        for h in REQUIRED:
            if row[COLUMNS[h][0]] is None:
                raise ParseError(f"{where}: line {line}: required value {h} is empty",
                                 source=SOURCE, line=line, column=h)
        scenario = normalise_scenario(str(row["scenario_raw"]))
        if scenario is None:
            raise ParseError(f"{where}: line {line}: unknown scenario {row['scenario_raw']!r} "
                             f"(known: {', '.join(SCENARIOS)})", source=SOURCE,
                             line=line, column="Scenario")
        vendor, mix = accelerator_parts(row["accelerator_model_name"])  # type: ignore[arg-type]
        model_id = normalise_model(str(row["model"]))
        row.update(
            round=str(row["version"]).strip(),
            scenario=scenario,
            model_id=model_id,
            model_family=model_family(model_id),
            availability=str(row["availability"]).strip().lower(),
            division=str(row["division"]).strip().lower(),
            is_power=str(row["units"]) in POWER_UNITS,
            accelerator_id=None,
            accelerator_vendor=vendor,
            accelerator_mix=mix,
            extras=json.dumps({h: values[h] for h in unknown}) if unknown else None,
            row_number=line,
            evidence=Evidence.measured.value,
            source_snapshot_id=snapshot_id,
        )
        row["id"] = result_id(row)
        if row["id"] in seen:
            raise ParseError(
                f"{where}: line {line} repeats the natural key of line {seen[row['id']]} "
                f"({', '.join(str(row[k]) for k in NATURAL_KEY)})", source=SOURCE, line=line)
        seen[str(row["id"])] = line
        yield row
