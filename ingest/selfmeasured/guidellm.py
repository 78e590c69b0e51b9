"""GuideLLM (``guidellm benchmark``): ``benchmarks.json``.

Versioned by ``metadata.version`` (1: GuideLLM 0.4 and later, ``metadata.guidellm_version``);
``benchmarks`` holds one entry per strategy run (synchronous, concurrent, throughput, constant,
poisson, each point of a sweep). Each metric is split into ``successful``, ``errored``,
``incomplete`` and ``total`` distributions ({mean, median, percentiles p001…p999, total_sum,
count}); the figures stored are the successful ones, and ``request_totals`` gives the counts.
Units are in the names: ``request_latency`` in seconds, ``*_ms`` in milliseconds, rates in
tokens/s. GuideLLM's ``inter_token_latency_ms`` is per request (last − first token) / (output
tokens − 1): InferenceX's TPOT; but its distribution in ``metrics`` weights each request by its
output tokens − 1 (its count is the tokens, not the requests), so its median is not InferenceX's
per-request median. The per-request values are in ``requests.successful[*]``, a sample GuideLLM
may cut short (``--sample-requests``): when it holds every successful request, TPOT's median and
percentiles are computed from it, per request; otherwise the token-weighted figures are kept and
said so (``interactivity_basis`` and the note). Its ``time_per_output_token_ms`` includes TTFT
(not TPOT; kept in extras). GuideLLM keeps no pooled chunk gaps, so ITL is NULL.
"""

from __future__ import annotations

from ingest.selfmeasured.fields import RunReader, timestamp
from ingest.selfmeasured.runs import Parsed, Run, finish, percentile

TOOL = "guidellm"
VERSIONS = {1}
LATENCY = {"ttft": ("time_to_first_token_ms", 1e-3), "tpot": ("inter_token_latency_ms", 1e-3),
           "e2el": ("request_latency", 1.0)}
STATS = (("median", "median", 50.0), ("p90", "p90", 90.0), ("p99", "p99", 99.0),
         ("p999", "p999", 99.9))  # our column, GuideLLM's statistic, the percentile
_TPOT = ("GuideLLM: successful requests' figures; its inter_token_latency is InferenceX's TPOT "
         "(its time_per_output_token includes TTFT and is kept in extras)")
NOTE = (_TPOT + ", median and percentiles per request from every successful request's value; "
        "no pooled ITL; interactivity 1 / median TPOT; lengths are the measured means.")
WEIGHTED_NOTE = (_TPOT + ", but the file keeps no per-request value of every successful "
                 "request, so TPOT's median and percentiles are GuideLLM's token-weighted ones "
                 "(each request weighted by its output tokens − 1), not per request as "
                 "InferenceX's; no pooled ITL; lengths are the measured means.")
WEIGHTED_BASIS = ("1 / GuideLLM's token-weighted median inter_token_latency (requests weighted "
                  "by output tokens − 1; no per-request sample of every request in the file; "
                  "InferenceX uses 1 / the per-request median TPOT)")


def matches(doc: dict) -> bool:
    """A GuideLLM report: ``benchmarks`` and its metadata (or its args)."""
    return isinstance(doc.get("benchmarks"), list) and ("metadata" in doc or "args" in doc)


def _dist(reader: RunReader, metrics: dict, name: str, stat: str, scale: float = 1.0):
    block = (metrics.get(name) or {}).get("successful")
    if block is None:
        return None
    value = block.get(stat) if stat in ("mean", "median", "total_sum") \
        else (block.get("percentiles") or {}).get(stat)
    return reader.check(value, f"metrics.{name}.successful.{stat}", scale)


def _latencies(reader: RunReader, metrics: dict) -> Run:
    out: Run = {}
    for ours, (name, scale) in LATENCY.items():
        for col, stat, _ in STATS:
            out[f"{ours}_{col}_s"] = _dist(reader, metrics, name, stat, scale)
    return out


def _per_request_tpot(reader: RunReader, successful: int) -> list[float] | None:
    """Each successful request's TPOT in seconds, or None unless the file keeps every one
    (GuideLLM writes a sample of its requests; requests with one output token have none)."""
    sample = (reader.data.get("requests") or {}).get("successful")
    if not isinstance(sample, list) or not sample or len(sample) != successful:
        return None
    values = []
    for i, request in enumerate(sample):
        key = f"requests.successful[{i}].inter_token_latency_ms"
        if not isinstance(request, dict):
            raise reader.fail("a request must be an object", key.rsplit(".", 1)[0])
        value = reader.check(request.get("inter_token_latency_ms"), key, 1e-3)
        if value is not None:
            values.append(value)
    return values or None


def _tpot(reader: RunReader, run: Run) -> str:
    """TPOT's median and percentiles per request where the file allows (the note that says
    which), else the token-weighted ones already in ``run``, with interactivity labelled."""
    values = _per_request_tpot(reader, run["completed_requests"])
    if values is not None:
        run.update({f"tpot_{col}_s": percentile(values, q) for col, _, q in STATS})
        return NOTE
    if run["tpot_median_s"]:
        run["interactivity"] = 1.0 / run["tpot_median_s"]
        run["interactivity_basis"] = WEIGHTED_BASIS
    return WEIGHTED_NOTE


def _load(reader: RunReader, strategy: dict) -> Run:
    kind = strategy.get("type_")
    if kind == "synchronous":
        return {"conc": 1}
    if kind in ("concurrent", "throughput"):
        conc = strategy.get("max_concurrency") or strategy.get("streams")
        return {"conc": round(reader.check(conc, "config.strategy.max_concurrency") or 0) or None}
    return {"request_rate": reader.check(strategy.get("rate"), "config.strategy.rate")}


def parse_run(reader: RunReader, model: str | None) -> Run:
    """One benchmark's columns."""
    metrics = reader.raw("metrics", required=True)
    totals = metrics.get("request_totals")
    if not isinstance(totals, dict):
        raise reader.fail("required field missing", "metrics.request_totals")
    config = reader.raw("config") or {}
    run: Run = {
        "model_in_file": model,
        "run_at": timestamp(reader, "start_time", reader.raw("start_time")),
        **_load(reader, config.get("strategy") or {}),
        "duration_s": reader.number("duration", required=True),
        "completed_requests": round(reader.check(totals.get("successful"), "successful") or 0),
        "failed_requests": round(reader.check(totals.get("errored"), "errored") or 0),
        "incomplete_requests": round(reader.check(totals.get("incomplete"), "incomplete") or 0),
        "total_input_tokens": _dist(reader, metrics, "prompt_token_count", "total_sum"),
        "total_output_tokens": _dist(reader, metrics, "output_token_count", "total_sum"),
        "request_throughput": _dist(reader, metrics, "requests_per_second", "mean"),
        "output_tput": _dist(reader, metrics, "output_tokens_per_second", "mean"),
        "total_tput": _dist(reader, metrics, "tokens_per_second", "mean"),
        **_latencies(reader, metrics),
    }
    note = _tpot(reader, run)
    reader.used.update({"requests", "scheduler_state"})  # per-request samples: in the raw file
    return finish(run, reader, note)


def parse(file: str, docs: list[dict]) -> Parsed:
    """Every benchmark of the report."""
    doc = docs[0]
    head = RunReader(file, None, doc)
    version = (doc.get("metadata") or {}).get("version")
    if version not in VERSIONS:
        raise head.fail(f"unknown GuideLLM report version {version!r} (known: "
                        f"{', '.join(map(str, sorted(VERSIONS)))})", "metadata.version")
    benches = doc["benchmarks"]
    if not benches:
        raise head.fail("the report has no benchmarks", "benchmarks")
    model = (doc.get("args") or {}).get("model")
    parsed = Parsed(TOOL, f"metadata v{version}", (doc.get("metadata") or {}).get("guidellm_version"))
    parsed.runs = [parse_run(RunReader(file, i, b), model) for i, b in enumerate(benches)]
    return parsed
