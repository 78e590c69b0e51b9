"""NVIDIA AIPerf (``aiperf profile``, successor of genai-perf): ``profile_export_aiperf.json``.

Three layouts (AIPerf's ``exporters/json_exporter.py``):

* ``records`` (until 2025-10-10): metrics under ``records`` by tag, beside ``input_config``;
* top level without ``schema_version`` (from 2025-10-10, AIPerf 43b78902 "Match GenAI-Perf
  format", ``JsonExportData``): the same metrics at the top level beside ``input_config``, no
  ``records``, no ``aiperf_version``, the tags ``time_to_first_token`` and
  ``time_to_second_token`` (were ``ttft``, ``ttst``);
* ``schema_version`` 1.x (with ``aiperf_version``): metrics at the top level.

Each metric is ``{unit, avg, min, max, std, p1…p99}`` (no p99.9). Tags: ``ttft`` or
``time_to_first_token``; ``inter_token_latency`` — per request (latency − TTFT) / (output tokens
− 1), i.e. InferenceX's TPOT; ``inter_chunk_latency`` — every gap between chunks, InferenceX's
ITL; ``request_latency``; ``output_token_throughput_per_user`` (per request 1 / its
inter_token_latency: the median is the interactivity); ``request_count``,
``error_request_count``; ``benchmark_duration``; ``total_isl``, ``total_osl`` (output includes
reasoning tokens); ``output_token_throughput``. Total tokens/s is derived from the token totals
and the duration where the file has no ``total_token_throughput``. GPU names appear only with
telemetry and are not used: the importer states the hardware.
"""

from __future__ import annotations

from ingest.selfmeasured.fields import RunReader, timestamp
from ingest.selfmeasured.runs import Parsed, Run, finish

TOOL = "aiperf"
SCHEMAS = ("1.",)  # schema_version prefixes this parser reads
LATENCY = {"ttft": ("ttft", "time_to_first_token"), "tpot": ("inter_token_latency",),
           "itl": ("inter_chunk_latency",), "e2el": ("request_latency",)}
RATE_UNITS = {"tokens/sec", "requests/sec", "tokens/sec/user", "tokens/s", "requests/s"}
NOTE = ("AIPerf: its inter_token_latency is InferenceX's TPOT, its inter_chunk_latency "
        "InferenceX's ITL; interactivity is its median output_token_throughput_per_user; no "
        "p99.9; output tokens include reasoning tokens; failed = error_request_count (cancelled "
        "requests are errors in AIPerf); lengths are the measured means.")


RUN_TAGS = ("request_count", "request_latency", "benchmark_duration")  # every run has them


def _tagged(doc: dict) -> bool:
    """Whether ``doc`` holds AIPerf's tagged metrics at its top level (``{unit, avg, …}``)."""
    return any(isinstance(doc.get(tag), dict) and "unit" in doc[tag] for tag in RUN_TAGS)


def matches(doc: dict) -> bool:
    """An AIPerf export: ``aiperf_version``, or ``input_config`` beside ``records`` of tagged
    metrics or beside the tagged metrics themselves."""
    return "aiperf_version" in doc or ("input_config" in doc and (
        isinstance(doc.get("records"), dict) or _tagged(doc)))


def _metrics(reader: RunReader) -> tuple[str, dict]:
    doc = reader.data
    if "schema_version" not in doc:
        if isinstance(doc.get("records"), dict):
            return "records (before schema_version)", doc["records"]
        return "top level (before schema_version)", doc
    version = str(doc["schema_version"])
    if not version.startswith(SCHEMAS):
        raise reader.fail(f"unknown AIPerf schema version {version!r} (known: 1.x, and the "
                          "earlier records layout)", "schema_version")
    return version, doc


def _stat(reader: RunReader, metrics: dict, tag: str, stat: str = "avg") -> float | None:
    """One statistic of one metric, converted to seconds when its unit is a time."""
    metric = metrics.get(tag)
    if metric is None:
        return None
    if not isinstance(metric, dict) or "unit" not in metric:
        raise reader.fail("a metric must be an object with a unit", tag)
    unit = str(metric["unit"])
    scale = 1.0 if unit in RATE_UNITS or unit in ("tokens", "requests") \
        else reader.unit(unit, f"{tag}.unit")
    return reader.check(metric.get(stat), f"{tag}.{stat}", scale)


def _latencies(reader: RunReader, metrics: dict) -> Run:
    out: Run = {}
    for ours, tags in LATENCY.items():
        tag = next((t for t in tags if t in metrics), tags[0])
        for col, stat in (("median", "p50"), ("p90", "p90"), ("p99", "p99")):
            out[f"{ours}_{col}_s"] = _stat(reader, metrics, tag, stat)
    return out


def _concurrency(config: dict) -> int | None:
    loadgen = config.get("loadgen") or {}
    phases = [p for p in config.get("phases") or [] if isinstance(p, dict)]
    found = loadgen.get("concurrency") or next((p.get("concurrency") for p in phases
                                                if p.get("name") == "profiling"), None)
    return int(found) if isinstance(found, int | float) else None


def _model(config: dict) -> str | None:
    names = (config.get("endpoint") or {}).get("model_names") or \
        [m.get("name") for m in (config.get("models") or {}).get("items") or []]
    return ", ".join(str(n) for n in names if n) or None


def _failures(reader: RunReader, errors: int | None) -> Run:
    """Failed and cancelled requests from ``error_request_count`` (``errors``) and the file's
    ``error_summary`` (a count per error type). AIPerf leaves the error count out of a run with
    no error, where the summary is an empty list: 0 then, not unknown. Its cancellations
    (RequestCancellationError, code 499) are errors to AIPerf and requests cut off before they
    finished here (``incomplete_requests``)."""
    summary = reader.raw("error_summary")
    if not isinstance(summary, list):  # not said: as the count says
        return {"failed_requests": errors}
    counts = [(int(e.get("count") or 0), (e.get("error_details") or {}).get("type"))
              for e in summary if isinstance(e, dict)]
    cancelled = sum(n for n, kind in counts if kind == "RequestCancellationError")
    if errors is None:
        errors = sum(n for n, _ in counts)
    return {"failed_requests": errors - cancelled, "incomplete_requests": cancelled}


def parse_run(reader: RunReader, metrics: dict) -> Run:
    """The run's columns."""
    config = reader.raw("input_config") or {}
    run: Run = {
        "model_in_file": _model(config), "conc": _concurrency(config),
        "run_at": timestamp(reader, "start_time", reader.raw("start_time")),
        "duration_s": _stat(reader, metrics, "benchmark_duration"),
        "completed_requests": _stat(reader, metrics, "request_count"),
        "failed_requests": _stat(reader, metrics, "error_request_count"),
        "total_input_tokens": _stat(reader, metrics, "total_isl"),
        "total_output_tokens": _stat(reader, metrics, "total_osl"),
        "request_throughput": _stat(reader, metrics, "request_throughput"),
        "output_tput": _stat(reader, metrics, "output_token_throughput"),
        "total_tput": _stat(reader, metrics, "total_token_throughput"),
        "interactivity": _stat(reader, metrics, "output_token_throughput_per_user", "p50"),
        **_latencies(reader, metrics),
    }
    if run["completed_requests"] is None:
        raise reader.fail("required field missing", "request_count")
    for key in ("completed_requests", "failed_requests"):
        run[key] = None if run[key] is None else round(run[key])
    run.update(_failures(reader, run["failed_requests"]))
    if run["interactivity"] is not None:
        run["interactivity_basis"] = "AIPerf median output_token_throughput_per_user"
    reader.used.update(metrics.keys() & {t for ts in LATENCY.values() for t in ts})
    return finish(run, reader, NOTE)


def parse(file: str, docs: list[dict]) -> Parsed:
    """The export's run (one per file)."""
    reader = RunReader(file, 0, docs[0])
    schema, metrics = _metrics(reader)
    parsed = Parsed(TOOL, schema, docs[0].get("aiperf_version"))
    parsed.runs = [parse_run(reader, metrics)]
    return parsed
