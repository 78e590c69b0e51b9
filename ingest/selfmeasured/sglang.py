"""SGLang ``python -m sglang.bench_serving --output-file`` (JSONL, one line per run).

Keys (``sglang/bench_serving.py``): ``backend``, ``dataset_name``, ``request_rate`` (at its
default the bare JSON literal ``Infinity``, json.dumps of float("inf"); ``"trace"`` with
``--use-trace-timestamps``: no fixed rate, stored NULL), ``max_concurrency``, ``duration`` (s),
``completed``, ``total_input_tokens``, ``total_output_tokens`` (and ``_retokenized``),
``output_throughput`` and, in later versions, ``request_throughput``, ``input_throughput``,
``total_throughput``, ``mean_/median_/std_/p<N>_`` of ``ttft``, ``tpot``, ``itl`` and
``e2e_latency`` in milliseconds, ``server_info`` (the server's arguments and version). No model
key; ``random_input_len``/``random_output_len`` are the CLI values — upper bounds when
``random_range_ratio`` < 1 and unused for other datasets — so the lengths stored are the
measured means. Older files report only medians of TTFT and ITL: then interactivity is
1 / median ITL, which is not InferenceX's (1 / median TPOT) and is said so.
"""

from __future__ import annotations

from ingest.selfmeasured.fields import RunReader, ms_family, timestamp
from ingest.selfmeasured.runs import Parsed, Run, finish

TOOL = "sglang"
KEYS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e_latency"}
NOTE = ("SGLang bench_serving: TPOT per request excluding the first token, ITL over every chunk "
        "gap (InferenceX's definitions); lengths are the measured means per completed request "
        "(random_input_len/random_output_len are CLI upper bounds, kept in extras); no model "
        "and no run time in the file.")
ITL_BASIS = "1 / median ITL (the file reports no TPOT; InferenceX uses 1 / median TPOT)"


def matches(doc: dict) -> bool:
    """An SGLang result: run keys, no ``model_id``, and SGLang's own keys."""
    own = {"total_output_tokens_retokenized", "server_info", "random_range_ratio"}
    return "output_throughput" in doc and "model_id" not in doc and bool(own & doc.keys())


def schema_of(doc: dict) -> str:
    """``with server_info`` (later versions) or ``without server_info``."""
    return "with server_info" if "server_info" in doc else "without server_info"


def _version(doc: dict) -> str | None:
    info = doc.get("server_info")
    return str(info["version"]) if isinstance(info, dict) and info.get("version") else None


def server_gpus(info: object) -> tuple[int, str] | None:
    """The GPUs one SGLang server used, from its arguments in ``server_info`` (the count and
    how it follows), or None when they are not stated there (an older file, another shape).

    sglang 0.5.4.post3 ``srt/managers/data_parallel_controller.py``: each data-parallel
    replica takes its own block, ``base_gpu_id += server_args.tp_size * server_args.pp_size *
    server_args.gpu_id_step``; with ``enable_dp_attention`` one tensor-parallel group is
    launched instead ("Data parallelism reuses the tensor parallelism group"). ``ep_size``
    adds none (experts are spread over the tensor-parallel ranks) and ``tp_size`` already
    counts every node's; 0.5.23 reports DP attention as ``dp_size`` 1, the same count. A
    server of a prefill/decode pair (``disaggregation_mode``) is one side of the deployment:
    a router answers ``/get_server_info`` with one worker's arguments, so no count is read."""
    if not isinstance(info, dict) or "tp_size" not in info \
            or info.get("disaggregation_mode") not in (None, "null"):
        return None  # a prefill or decode server (a router answered for one side): not all
    sizes = {k: info.get(k, 1) for k in ("tp_size", "pp_size", "dp_size")}
    if not all(type(v) is int and v >= 1 for v in sizes.values()):
        return None
    if info.get("enable_dp_attention") is True:
        sizes["dp_size"] = 1  # the replicas share the tensor-parallel GPUs
    gpus = sizes["tp_size"] * sizes["pp_size"] * sizes["dp_size"]
    return gpus, " x ".join(f"{k} {v}" for k, v in sizes.items())


def parse_run(reader: RunReader) -> Run:
    """One run's columns."""
    reader.used.add("server_info")
    run: Run = {
        "run_at": timestamp(reader, "date", reader.raw("date"), "%Y%m%d-%H%M%S"),
        "conc": reader.count("max_concurrency"),
        "request_rate": reader.request_rate(),
        "duration_s": reader.number("duration", required=True),
        "completed_requests": reader.count("completed", required=True),
        "total_input_tokens": reader.number("total_input_tokens", required=True),
        "total_output_tokens": reader.number("total_output_tokens", required=True),
        "request_throughput": reader.number("request_throughput"),
        "output_tput": reader.number("output_throughput", required=True),
        "total_tput": reader.number("total_throughput"),
        **ms_family(reader, KEYS),
    }
    if run["tpot_median_s"] is None and run["itl_median_s"]:
        run["interactivity"] = 1.0 / run["itl_median_s"]
        run["interactivity_basis"] = ITL_BASIS
    return finish(run, reader, NOTE)


def parse(file: str, docs: list[dict]) -> Parsed:
    """Every run of the file (one per line)."""
    parsed = Parsed(TOOL, schema_of(docs[0]), _version(docs[0]))
    parsed.runs = [parse_run(RunReader(file, i, d)) for i, d in enumerate(docs)]
    parsed.gpus = [(i, *g) for i, d in enumerate(docs)
                   if (g := server_gpus(d.get("server_info"))) is not None]
    return parsed
