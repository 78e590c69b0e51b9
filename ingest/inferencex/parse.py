"""InferenceX responses → typed rows.

``/api/v1/benchmarks`` answers a JSON array of BenchmarkRow objects (contract: the OpenAPI
registry of SemiAnalysisAI/InferenceX-app, ``api-documentation.ts``). The field set has grown
over time without a version (``id``, ``benchmark_type``, ``offload_mode``… arrived mid-2026; p90
and p99.9 percentiles later than the medians), so the parser is defensive:

* a field perfledger needs (``REQUIRED``) missing from a row fails the source, naming the field
  and the row — the last good observations keep serving;
* a metric the row does not carry is NULL, never 0 (the API omits a key rather than send 0);
* power figures land in their columns only when the row's own verdict ``power_valid`` is 1, with
  the schema version beside them; legacy figures without a verdict stay in ``extras`` only;
  figures InferenceX withheld (``power_valid`` 0) are kept nowhere but the raw bytes;
* a row is refused (its model fails, the others load) when its JSON repeats a key, holds
  NaN/Infinity, its concurrency or a published GPU count is not positive, or its date is after
  the fetch; a multinode aggregated row is the exception its runner makes: all its GPUs are
  published as prefill and its decode count, TP and EP as 0 (InferenceX's
  ``utils/process_result.py`` since PR #1256, May 2026);
* throughputs are kept as published, named for what InferenceX divides them by
  (``output_tput_per_decode_gpu``, ``input_tput_per_prefill_gpu``); the view ``observation``
  counts every GPU and divides by it (``warehouse.gpus``);
* every field or metric without a column goes to ``extras`` (JSON); fields the publisher's
  schema does not document are also named in the run report.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import date, datetime

from ingest import jsonsafe
from ingest.http import Raw
from warehouse.exceptions import ParseError
from warehouse.model.vocabulary import (
    INFERENCEX_ATTRIBUTION,
    INFERENCEX_MEASURER,
    VALID_POWER_SCHEMA,
    Evidence,
    PowerStatus,
)

SOURCE = "inferencex"
PARSER_VERSION = "inferencex-benchmarks/2"

# Fields without which a row cannot be placed on a curve. ``run_url`` must be present as a key
# (its value may be null: older rows have no run).
REQUIRED = ("hardware", "framework", "model", "precision", "isl", "osl", "conc", "metrics",
            "date", "run_url")

# Row fields with a column of their own (name on the wire = column name).
STRINGS = ("hardware", "framework", "model", "precision", "spec_method", "benchmark_type",
           "offload_mode", "image", "recipe_fingerprint", "run_url", "run_started_at",
           "curve_workflow_run_id", "curve_run_started_at")
INTEGERS = ("prefill_tp", "prefill_ep", "prefill_num_workers", "decode_tp", "decode_ep",
            "decode_num_workers", "num_prefill_gpu", "num_decode_gpu", "isl", "osl", "conc")
BOOLEANS = ("disagg", "is_multinode", "prefill_dp_attention", "decode_dp_attention")
COLUMNED = {*STRINGS, *INTEGERS, *BOOLEANS, "id", "date", "curve_date", "metrics"}
# Fields the publisher documents that have no column here (kept in extras, not reported).
DOCUMENTED = {"workers", "power_invalid_reasons", "power_audit", "workflow_run_id"}
# Parallelism the metrics carry (integers; absent before mid-2026: NULL, read as 1).
PARALLELISM = {"pp": "pp", "pcp_size": "pcp_size", "dcp_size": "dcp_size"}
# Counts that must be positive where published (the decode ones not on a multinode aggregated
# row, whose runner publishes them as 0: ``multinode_aggregated``).
POSITIVE = ("conc", "prefill_tp", "num_prefill_gpu")
DECODE_POSITIVE = ("decode_tp",)

# column -> metrics key (times in seconds, throughputs in tokens/s per GPU).
METRICS = {
    **{f"{fam}_{col}_s": f"{wire}_{fam}" for fam in ("ttft", "tpot", "itl", "e2el")
       for col, wire in (("median", "median"), ("p90", "p90"), ("p99", "p99"),
                         ("p999", "p99.9"))},
    "interactivity": "median_intvty",
    "interactivity_p99": "p99_intvty",
    # As published: InferenceX divides input by the prefill GPUs and output by the decode GPUs
    # of a disaggregated configuration, total by all of them (the view observation divides
    # each by every GPU).
    "tput_per_gpu": "tput_per_gpu",
    "input_tput_per_prefill_gpu": "input_tput_per_gpu",
    "output_tput_per_decode_gpu": "output_tput_per_gpu",
}
POWER_METRICS = {"avg_power_w": "avg_power_w", "avg_total_gpu_power_w": "avg_total_gpu_power_w",
                 "joules_per_output_token": "joules_per_output_token"}
POWER_FLAGS = ("power_valid", "power_metric_schema_version")
# Any of these present means the row carries power figures (for the legacy status).
POWER_KEYS = re.compile(r"(power|joules|energy)")

# The natural key of a row without a published id: what makes one sweep point of one run.
NATURAL_KEY = ("model", "hardware", "framework", "precision", "spec_method", "disagg",
               "is_multinode", "prefill_tp", "prefill_ep", "prefill_dp_attention",
               "prefill_num_workers", "decode_tp", "decode_ep", "decode_dp_attention",
               "decode_num_workers", "num_prefill_gpu", "num_decode_gpu", "benchmark_type",
               "isl", "osl", "conc", "offload_mode", "date", "run_url")


class ParseReport:
    """What the parser saw that the run report should say."""

    def __init__(self) -> None:
        self.unknown_fields: set[str] = set()
        self.duplicates = 0


def _fail(what: str, index: int, url: str) -> ParseError:
    return ParseError(f"{SOURCE}: {what} (row {index} of {url})", source=SOURCE, url=url)


def load_json(raw: Raw) -> object:
    """The body as strict JSON (``ingest.jsonsafe``: no repeated key, no NaN/Infinity, nesting
    bounded), or a ParseError saying why not."""
    try:
        return jsonsafe.loads(raw.body)
    except jsonsafe.JSONRefused as e:
        raise ParseError(f"{SOURCE}: {raw.url}: the JSON {e}", source=SOURCE,
                         url=raw.url) from None


def natural_id(row: dict) -> str:
    """``ix:`` + the published id, else ``ix:h:`` + a hash of the natural key (stable across
    refreshes and across the benchmarks and history endpoints, which differ in ``image``)."""
    if row.get("id") is not None:
        return f"ix:{row['id']}"
    key = json.dumps([row.get(k) for k in NATURAL_KEY], separators=(",", ":"))
    return "ix:h:" + hashlib.sha256(key.encode()).hexdigest()[:20]


def _typed(value: object, kind: type, name: str, index: int, url: str) -> object:
    if value is None:
        return None
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise _fail(f"field {name!r} is not an integer: {value!r}", index, url)
        return int(value)
    if kind is bool:
        if not isinstance(value, bool):
            raise _fail(f"field {name!r} is not a boolean: {value!r}", index, url)
        return value
    if not isinstance(value, str):
        raise _fail(f"field {name!r} is not a string: {value!r}", index, url)
    return value


def _number(metrics: dict, key: str, index: int, url: str) -> float | None:
    value = metrics.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(f"metric {key!r} is not a number: {value!r}", index, url)
    return float(value)


def power_status(metrics: dict) -> PowerStatus:
    """The row's power verdict: valid only for power_valid 1 on schema version 2."""
    valid = metrics.get("power_valid")
    version = metrics.get("power_metric_schema_version")
    if valid == 1:
        return PowerStatus.valid if version == VALID_POWER_SCHEMA else PowerStatus.unsupported_schema
    if valid == 0:
        return PowerStatus.invalid
    if any(POWER_KEYS.search(k) for k in metrics):
        return PowerStatus.legacy_unverified
    return PowerStatus.none


# The published values a revision changes (a row's figures and configuration); provenance
# (run URL, image, curve identity, which moves when a newer run carries a point forward) and
# what perfledger derives are not among them.
REVISED = tuple(c for c in STRINGS if c not in ("image", "run_url", "run_started_at",
                                                "curve_workflow_run_id", "curve_run_started_at")
                ) + INTEGERS + BOOLEANS + tuple(PARALLELISM) + tuple(METRICS) \
    + tuple(POWER_METRICS) + POWER_FLAGS + ("observed_on",)


def content_sha256(row: dict) -> str:
    """sha256 of a row's ``REVISED`` values (a parsed row or a stored one alike)."""
    values = json.dumps([row.get(c) for c in REVISED], default=str, separators=(",", ":"))
    return hashlib.sha256(values.encode()).hexdigest()


def multinode_aggregated(row: dict) -> bool:
    """A multinode row with no decode GPUs: one aggregated deployment over several nodes, which
    InferenceX's runner writes with every GPU as prefill and decode GPUs, TP and EP as 0."""
    return row["is_multinode"] is True and row["num_decode_gpu"] == 0


def _check_counts(out: dict, index: int, url: str) -> None:
    """Concurrency and published GPU counts are positive (a disaggregated row's decode count
    and every row's decode TP too, but for a multinode aggregated row's, which are 0);
    anything else is not an observation."""
    decode = () if multinode_aggregated(out) else \
        DECODE_POSITIVE + (("num_decode_gpu",) if out["disagg"] else ())
    for name in POSITIVE + decode:
        if out[name] is not None and out[name] <= 0:
            raise _fail(f"field {name!r} is {out[name]}: not a possible observation", index, url)
    for name in ("decode_tp", "num_decode_gpu"):
        if out[name] is not None and out[name] < 0:
            raise _fail(f"field {name!r} is {out[name]}", index, url)


def _day(value: object, name: str, index: int, url: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise _fail(f"field {name!r} is not YYYY-MM-DD: {value!r}", index, url) from None


def parse_row(row: object, index: int, url: str, report: ParseReport,
              fetched_on: date | None = None) -> dict:
    """One BenchmarkRow → one observation (without its provenance columns). A date after
    ``fetched_on`` (the fetch's own date) is refused."""
    if not isinstance(row, dict):
        raise _fail(f"row is not an object: {str(row)[:80]}", index, url)
    for name in REQUIRED:
        if name not in row or (row[name] is None and name not in ("run_url", "isl", "osl")):
            raise _fail(f"required field {name!r} is missing", index, url)
    metrics = row["metrics"]
    if not isinstance(metrics, dict):
        raise _fail("field 'metrics' is not an object", index, url)
    key = natural_id(row)
    out: dict = {"id": key, "observation_key": key,
                 "upstream_id": None if row.get("id") is None else str(row["id"])}
    for names, kind in ((STRINGS, str), (INTEGERS, int), (BOOLEANS, bool)):
        for name in names:
            out[name] = _typed(row.get(name), kind, name, index, url)
    if out["conc"] is None:
        raise _fail("required field 'conc' is missing", index, url)
    _check_counts(out, index, url)
    out["observed_on"] = _day(row["date"], "date", index, url)
    if fetched_on is not None and out["observed_on"] > fetched_on:
        raise _fail(f"field 'date' is {out['observed_on']}, after the fetch ({fetched_on})",
                    index, url)
    out["curve_date"] = _day(row.get("curve_date"), "curve_date", index, url)
    if out["run_started_at"] is None and out["curve_date"] == out["observed_on"]:
        out["run_started_at"] = out["curve_run_started_at"]  # the curve's run is the row's
    out["hardware_base"] = re.split(r"[_-]", out["hardware"].strip().lower())[0]
    used = set(POWER_FLAGS) | set(PARALLELISM.values())
    for column, key in PARALLELISM.items():
        out[column] = _typed(metrics.get(key), int, f"metrics.{key}", index, url)
    for column, key in METRICS.items():
        out[column] = _number(metrics, key, index, url)
        used.add(key)
    status = power_status(metrics)
    out["power_status"] = status.value
    for flag in POWER_FLAGS:
        value = _number(metrics, flag, index, url)
        out[flag] = None if value is None else int(value)
    for column, key in POWER_METRICS.items():
        # Kept only with a verdict of 1; otherwise (withheld, or no verdict) extras only.
        out[column] = _number(metrics, key, index, url) if metrics.get("power_valid") == 1 else None
        if metrics.get("power_valid") == 1:
            used.add(key)
    extras: dict = {k: v for k, v in row.items() if k not in COLUMNED}
    rest = {k: v for k, v in metrics.items() if k not in used
            and not (metrics.get("power_valid") == 0 and POWER_KEYS.search(k))}
    if rest:
        extras["metrics"] = rest
    report.unknown_fields |= set(row) - COLUMNED - DOCUMENTED
    out["extras"] = json.dumps(extras, sort_keys=True) if extras else None
    out["content_sha256"] = content_sha256(out)
    return out


def parse_benchmarks(raw: Raw, *, display: str, snapshot_id: str, as_of: date | None,
                     report: ParseReport, rows_key: str | None = None) -> Iterator[dict]:
    """Every row of one /api/v1/benchmarks response, with provenance; a row whose id was
    already seen in this response is skipped (counted)."""
    data = load_json(raw)
    if rows_key is not None and isinstance(data, dict):  # an export carrying the answer's rows
        data = data.get(rows_key)
    if not isinstance(data, list):
        what = data.get("error") if isinstance(data, dict) else None
        raise ParseError(f"{SOURCE}: {raw.url} did not answer a list of rows"
                         + (f" ({what})" if what else ""), source=SOURCE, url=raw.url)
    seen: set[str] = set()
    fetched: datetime = raw.fetched_at
    for index, item in enumerate(data):
        row = parse_row(item, index, raw.url, report, fetched.date())
        if row["id"] in seen:
            report.duplicates += 1
            continue
        seen.add(row["id"])
        row.update(model_display=display, requested_as_of=as_of, measurer=INFERENCEX_MEASURER,
                   attribution=INFERENCEX_ATTRIBUTION, first_seen_at=fetched,
                   valid_from=fetched, valid_to=None, withdrawn_at=None,
                   evidence=Evidence.third_party_measured.value, source_snapshot_id=snapshot_id)
        yield row


def parse_availability(raw: Raw) -> list[str]:
    """The raw model keys the availability listing names (sorted)."""
    data = load_json(raw)
    if not isinstance(data, list):
        raise ParseError(f"{SOURCE}: {raw.url} did not answer a list", source=SOURCE, url=raw.url)
    keys = set()
    for index, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("model"), str):
            raise _fail("required field 'model' is missing", index, raw.url)
        keys.add(item["model"])
    return sorted(keys)
