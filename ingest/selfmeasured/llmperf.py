"""LLMPerf (``ray-project/llmperf`` ``token_benchmark_ray.py``): ``<model>_<in>_<out>_summary.json``.

One flat object per run, seconds throughout (``metrics_summary``): ``results_<metric>_quantiles_
p25…p99``, ``_mean``, ``_min``, ``_max``, ``_stddev`` for ``ttft_s``, ``inter_token_latency_s``,
``end_to_end_latency_s``, ``request_output_throughput_token_per_s``, ``number_input_tokens``,
``number_output_tokens``; ``num_concurrent_requests``, ``results_num_completed_requests``,
``results_number_errors``, ``results_mean_output_throughput_token_per_s`` (output tokens of the
completed requests over the run's wall time), ``results_num_completed_requests_per_min``,
``timestamp`` (epoch seconds), ``version`` (the format's date). LLMPerf's inter-token latency is
each request's end-to-end time divided by its output tokens, TTFT included, and its per-request
output rate counts TTFT too: neither is TPOT, so TPOT and ITL stay NULL and interactivity is
LLMPerf's median per-request rate (lower than InferenceX's 1 / median TPOT, said so).
"""

from __future__ import annotations

from ingest.selfmeasured.fields import RunReader, timestamp
from ingest.selfmeasured.runs import Parsed, Run, finish

TOOL = "llmperf"
VERSIONS = {"2023-08-31"}
NOTE = ("LLMPerf: inter-token latency and per-request output rate include TTFT (end-to-end time "
        "/ output tokens), so TPOT and ITL are NULL and interactivity is LLMPerf's median "
        "per-request output tokens/s over the whole request (below InferenceX's 1 / median "
        "TPOT); no p99.9; duration from completed requests / completed per minute.")
BASIS = "LLMPerf median per-request output tokens / end-to-end latency (TTFT included)"
# The columns that count tokens: blanked when LLMPerf's counts are not the served model's
TOKEN_COLUMNS = ("isl", "osl", "total_input_tokens", "total_output_tokens", "output_tput",
                 "total_tput", "interactivity", "interactivity_basis")
NOT_MODEL_TOKENS = (
    "LLMPerf counted up to {counted:g} output tokens in a request where every request asked "
    "for at most {asked:g} (max_tokens = mean_output_tokens, stddev_output_tokens 0): its token "
    "counts are not the served model's (upstream LLMPerf counts every model's tokens with the "
    "Llama-2 tokenizer, hf-internal-testing/llama-tokenizer: 'Using one tokenizer ensures a "
    "fairer comparison across different LLMs'), so the run's lengths, token throughputs and interactivity are "
    "left empty; its latencies and request counts stand. LLMPerf's own figures: "
    "{figures}.")


def matches(doc: dict) -> bool:
    """An LLMPerf summary: its flat results keys."""
    return "results_num_completed_requests" in doc or "results_ttft_s_mean" in doc


def _quantiles(reader: RunReader, ours: str, theirs: str) -> Run:
    q = f"results_{theirs}_quantiles_"
    return {f"{ours}_median_s": reader.number(q + "p50"), f"{ours}_p90_s": reader.number(q + "p90"),
            f"{ours}_p99_s": reader.number(q + "p99")}


def parse_run(reader: RunReader) -> Run:
    """The run's columns."""
    done = reader.count("results_num_completed_requests", required=True) or 0
    per_min = reader.number("results_num_completed_requests_per_min", required=True) or 0.0
    mean_in = reader.number("results_number_input_tokens_mean", required=True) or 0.0
    mean_out = reader.number("results_number_output_tokens_mean", required=True) or 0.0
    run: Run = {
        "model_in_file": reader.raw("model"),
        "run_at": timestamp(reader, "timestamp", reader.raw("timestamp")),
        "conc": reader.count("num_concurrent_requests"),
        "completed_requests": done,
        "failed_requests": reader.count("results_number_errors"),
        "duration_s": done * 60.0 / per_min if per_min else None,
        "total_input_tokens": mean_in * done, "total_output_tokens": mean_out * done,
        "output_tput": reader.number("results_mean_output_throughput_token_per_s", required=True),
        "interactivity": reader.number(
            "results_request_output_throughput_token_per_s_quantiles_p50"),
        "interactivity_basis": BASIS,
        **_quantiles(reader, "ttft", "ttft_s"),
        **_quantiles(reader, "e2el", "end_to_end_latency_s"),
    }
    if run["interactivity"] is None:
        run["interactivity_basis"] = None
    return _model_tokens_only(finish(run, reader, NOTE), reader)


def _model_tokens_only(run: Run, reader: RunReader) -> Run:
    """``run`` with its token figures blanked when the file shows they are not the served
    model's tokens: each request asked for the same output length (stddev 0), a server stops
    at it, yet LLMPerf counted more in some request (``NOT_MODEL_TOKENS``)."""
    asked = reader.number("mean_output_tokens")
    spread = reader.number("stddev_output_tokens")
    counted = reader.number("results_number_output_tokens_max")
    if asked is None or spread != 0 or counted is None or counted <= asked:
        return run
    figures = ", ".join(f"{c} {run[c]:.6g}" for c in TOKEN_COLUMNS[:-1] if run.get(c) is not None)
    run.update(dict.fromkeys(TOKEN_COLUMNS))
    run["definition_note"] = f"{NOTE} {NOT_MODEL_TOKENS.format(counted=counted, asked=asked, figures=figures)}"
    return run


def parse(file: str, docs: list[dict]) -> Parsed:
    """The file's run (one summary per file; a JSONL of summaries gives one run a line)."""
    version = docs[0].get("version")
    if version not in VERSIONS:
        raise RunReader(file, None, docs[0]).fail(
            f"unknown LLMPerf summary version {version!r} (known: {', '.join(sorted(VERSIONS))})",
            "version")
    parsed = Parsed(TOOL, str(version))
    parsed.runs = [parse_run(RunReader(file, i, d)) for i, d in enumerate(docs)]
    return parsed
