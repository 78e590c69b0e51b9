"""vLLM ``vllm bench serve --save-result`` (formerly ``benchmarks/benchmark_serving.py``).

One JSON object per run; ``--append-result`` writes several, one a line. Keys (vLLM
``vllm/benchmarks/serve.py``): ``date`` (``%Y%m%d-%H%M%S``, the machine's local time when the
result was written), ``model_id``, ``request_rate`` (``"inf"`` as a string), ``max_concurrency``,
``duration`` (s), ``completed``, ``failed`` (bench serve only), ``total_input_tokens``,
``total_output_tokens``, ``request_throughput``, ``output_throughput``,
``total_token_throughput`` (tokens/s), and ``mean_/median_/std_/p<N>_`` of ``ttft``, ``tpot``,
``itl`` and, when asked (``--percentile-metrics``), ``e2el`` in milliseconds. TPOT is per request
(latency − TTFT) / (output tokens − 1), ITL every gap between streamed chunks: both as
InferenceX's runner (which uses this script) defines them.
"""

from __future__ import annotations

from ingest.selfmeasured.fields import RunReader, ms_family, timestamp
from ingest.selfmeasured.runs import Parsed, Run, finish

TOOL = "vllm"
KEYS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el"}
NOTE = ("vLLM bench serve: TPOT per request excluding the first token and ITL over every "
        "chunk gap, as InferenceX (whose runner uses this script); interactivity 1 / median "
        "TPOT; lengths are the measured means per completed request; the run time is the "
        "client machine's local time when the result was written, read as UTC.")


def matches(doc: dict) -> bool:
    """A vLLM result: its run keys and a ``model_id`` (SGLang's have none)."""
    return "model_id" in doc and bool({"output_throughput", "request_throughput"} & doc.keys())


def schema_of(doc: dict) -> str:
    """``bench serve`` (counts failed requests) or ``benchmark_serving`` (does not)."""
    return "bench serve" if "failed" in doc else "benchmark_serving"


def parse_run(reader: RunReader) -> Run:
    """One run's columns."""
    run: Run = {
        "model_in_file": reader.raw("model_id"),
        "run_at": timestamp(reader, "date", reader.raw("date"), "%Y%m%d-%H%M%S"),
        "conc": reader.count("max_concurrency"),
        "request_rate": reader.request_rate(),
        "duration_s": reader.number("duration", required=True),
        "completed_requests": reader.count("completed", required=True),
        "failed_requests": reader.count("failed"),
        "total_input_tokens": reader.number("total_input_tokens", required=True),
        "total_output_tokens": reader.number("total_output_tokens", required=True),
        "request_throughput": reader.number("request_throughput"),
        "output_tput": reader.number("output_throughput", required=True),
        "total_tput": reader.number("total_token_throughput"),
        **ms_family(reader, KEYS),
    }
    return finish(run, reader, NOTE)


def parse(file: str, docs: list[dict]) -> Parsed:
    """Every run of the file (one per JSON object)."""
    parsed = Parsed(TOOL, schema_of(docs[0]))
    parsed.runs = [parse_run(RunReader(file, i, d)) for i, d in enumerate(docs)]
    return parsed
