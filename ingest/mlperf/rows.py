"""What every MLPerf row is, whichever format it came from: the columns and their types, the
value conversions, the natural key, and the columns derived from the published ones.

Both parsers (``csv_format``, ``json_format``) read their format into the published columns
and hand each row to ``finish``, which adds the normalised columns next to the originals:
scenario, model id and family, accelerator vendor and mix, and ``total_accelerators`` where the
file has no such column (nodes × accelerators per node, said in ``total_accelerators_basis``).
Units the publisher's checker states otherwise are corrected by the rules declared in ``units``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ingest.mlperf.units import correct_units
from warehouse.exceptions import ParseError
from warehouse.model.vocabulary import (
    POWER_UNITS,
    SCENARIOS,
    Evidence,
    identity_text,
    model_family,
    normalise_model,
    normalise_scenario,
)

SOURCE = "mlperf"
# 4: a JSON summary's Total Accelerators, as published; 5: units the publisher's checker
# corrects (``units.UNIT_CORRECTIONS``: v5.1 llama3.1-8b Interactive is Tokens/s); 6: a JSON
# power row's total_accelerators_basis is its record's (computed, not "published"); 7: model
# families drop every accuracy target the rules state (yolo-95 → yolo) and v6.0 HPE's
# "resnet" is resnet50 (``vocabulary.ACCURACY_TARGETS``, ``MODEL_SPELLINGS``)
PARSER_VERSION = "mlperf-summary/7"

# Published columns of mlperf_result and their types (str, int, float, bool).
TYPES: dict[str, str] = {
    "organization": "str", "availability": "str", "division": "str", "system_type": "str",
    "system_name": "str", "platform": "str", "model": "str", "mlperf_model": "str",
    "scenario_raw": "str", "result": "float", "accuracy": "str", "number_of_nodes": "int",
    "host_processor_model_name": "str", "host_processors_per_node": "int",
    "host_processor_core_count": "str", "accelerator_model_name": "str",
    "accelerators_per_node": "int", "total_accelerators": "int", "location": "str",
    "framework": "str", "operating_system": "str", "notes": "str", "compliance": "str",
    "errors": "int", "version": "str", "inferred": "bool", "has_power": "bool", "units": "str",
    "weight_data_types": "str", "design_power_watts": "float", "private_id": "str",
    "system_id": "str", "details_url": "str", "code_url": "str",
}
# A row cannot be keyed or compared without these.
REQUIRED = ("organization", "availability", "division", "system_name", "platform", "model",
            "scenario_raw", "result", "units", "version")
# Published names that identify a row or are filtered on: a zero-width space or a fullwidth
# letter in them must not make a second organization, model or accelerator.
IDENTITY_COLUMNS = ("organization", "division", "availability", "system_name", "platform",
                    "model", "mlperf_model", "accelerator_model_name", "version", "units")
# The submitted model (normalised), never the official one: in the open division many
# submitted variants share one official model and must stay apart.
NATURAL_KEY = ("round", "division", "organization", "platform", "model_id", "scenario", "units")

_NULLS = {"", "None", "none", "NULL", "null", "nan", "NaN"}
_TRUE = {"1", "true", "True", "TRUE", "yes"}
_FALSE = {"0", "false", "False", "FALSE", "no"}
_VENDORS = {"nvidia": "NVIDIA", "amd": "AMD", "intel(r)": "Intel", "intel": "Intel",
            "google": "Google", "qualcomm": "Qualcomm"}


@dataclass
class ParseReport:
    """What parsing saw that is not an error: unknown columns, odd values."""

    warnings: list[str] = field(default_factory=list)


def accelerator_parts(name: str | None) -> tuple[str | None, str]:
    """(vendor, mix) for an accelerator name: mix is single, mixed or none."""
    if name is None or name.strip().upper() in {"N/A", "NA", "NONE", ""}:
        return None, "none"
    if " + " in name or re.search(r"\) and ", name) or re.search(r"\(x\d+\),", name):
        return None, "mixed"
    first = name.split()[0]
    return _VENDORS.get(first.lower(), first), "single"


def result_id(row: dict) -> str:
    """Stable id: sha256 of the natural key, 16 hex digits."""
    key = "\x1f".join(str(row[k]) for k in NATURAL_KEY)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def convert(value: object, kind: str, where: str, column: str, **context: Any) -> object:
    """A published value as ``kind``; None for the spellings of "no value". ``ParseError``
    names ``where`` (round and line or record) and the column."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.strip()
        if value in _NULLS:
            return None
    try:
        if kind == "str":
            return str(value)
        if kind == "int":
            number = float(value)  # type: ignore[arg-type]
            if not number.is_integer():
                raise ValueError(f"{value!r} is not a whole number")
            return int(number)
        if kind == "float":
            if isinstance(value, bool):
                raise ValueError(f"{value!r} is not a number")
            number = float(value.replace(",", "") if isinstance(value, str) else value)  # type: ignore[arg-type]
            if not math.isfinite(number):
                raise ValueError(f"{value!r} is not a finite number")
            return number
        if kind == "bool":
            if isinstance(value, bool):
                return value
            if str(value) in _TRUE:
                return True
            if str(value) in _FALSE:
                return False
            raise ValueError(f"{value!r} is not a boolean (0/1/True/False)")
    except (TypeError, ValueError) as e:
        raise ParseError(f"{where}, {column}: {e}", source=SOURCE, column=column,
                         **context) from None
    raise ValueError(f"unknown type {kind!r}")


def finish(row: dict, *, where: str, position: int, snapshot_id: str, source_format: str,
           extras: dict | None, published: dict[str, str], **context: Any) -> dict:
    """Check the required values and add the normalised and derived columns (and the id).
    ``published`` maps a column to its name in the file, for messages. Names used as
    identities (``IDENTITY_COLUMNS``) are compared as ``identity_text``; an original that
    differs is kept in ``extras`` (``original``)."""
    originals = {c: row[c] for c in IDENTITY_COLUMNS
                 if isinstance(row.get(c), str) and identity_text(row[c]) != row[c]}
    if originals:
        row.update({c: identity_text(v) or None for c, v in originals.items()})
        extras = {**(extras or {}), "original": originals}
    for column in REQUIRED:
        if row.get(column) is None:
            name = published.get(column, column)
            raise ParseError(f"{where}: required value {name} is empty", source=SOURCE,
                             column=name, **context)
    scenario = normalise_scenario(str(row["scenario_raw"]))
    if scenario is None:
        raise ParseError(f"{where}, {published.get('scenario_raw', 'scenario')}: unknown scenario "
                         f"{row['scenario_raw']!r} "
                         f"(known: {', '.join(SCENARIOS)})", source=SOURCE,
                         column=published.get("scenario_raw", "scenario"), **context)
    extras = correct_units(row, scenario, extras)
    vendor, mix = accelerator_parts(row.get("accelerator_model_name"))
    model_id = normalise_model(str(row["model"]))
    total, basis = row.get("total_accelerators"), "published"
    if mix == "none":
        total, basis = None, "none"  # a CPU-only system has no per-accelerator figure
    elif total is None:
        nodes, per_node = row.get("number_of_nodes"), row.get("accelerators_per_node")
        total = nodes * per_node if nodes is not None and per_node is not None else None
        basis = "computed" if total is not None else "unknown"
    row.update(
        round=str(row["version"]).strip(),
        scenario=scenario,
        model_id=model_id,
        model_family=model_family(model_id),
        availability=str(row["availability"]).strip().lower(),
        division=str(row["division"]).strip().lower(),
        is_power=str(row["units"]) in POWER_UNITS,
        total_accelerators=total,
        total_accelerators_basis=basis,
        accelerator_id=None,
        accelerator_vendor=vendor,
        accelerator_mix=mix,
        accelerator_match=None,
        extras=json.dumps(extras) if extras else None,
        row_number=position,
        source_format=source_format,
        evidence=Evidence.measured.value,
        source_snapshot_id=snapshot_id,
    )
    row["id"] = result_id(row)
    return row


class KeyGuard:
    """Refuses a second row with the same natural key, naming both places."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.seen: dict[str, str] = {}

    def check(self, row: dict, place: str, **context: Any) -> None:
        first = self.seen.setdefault(str(row["id"]), place)
        if first != place:
            raise ParseError(f"{self.where}: {place} repeats the natural key of {first} "
                             f"({', '.join(str(row[k]) for k in NATURAL_KEY)})", source=SOURCE,
                             **context)
