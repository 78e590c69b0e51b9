"""What a tool parser returns, and the figures every run gets the same way.

A parser turns the file's runs into ``Run`` column dicts named as ``self_observation`` names
them (seconds, tokens/s of the whole deployment). ``finish`` then derives, once for every tool,
what the file leaves to arithmetic: the lengths (mean tokens per completed request), total
tokens/s from the token totals and the duration where the tool reports none, requests/s, and
interactivity as 1 / median TPOT where the tool has no per-user figure of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ingest.selfmeasured.fields import RunReader

Run = dict[str, Any]


@dataclass
class Parsed:
    """A file's runs with what the file says about itself."""

    tool: str
    schema_version: str
    tool_version: str | None = None
    runs: list[Run] = field(default_factory=list)
    # (run, GPUs, how) where the file states the GPUs its server used (SGLang's server_info)
    gpus: list[tuple[int, int, str]] = field(default_factory=list)


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` by linear interpolation between the two
    nearest ranks: numpy's default method, which vLLM's bench serve (np.median,
    np.percentile), and so InferenceX's runner, uses for its per-request TPOT."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def finish(run: Run, reader: RunReader, note: str) -> Run:
    """Complete ``run`` (see the module docstring), attach the definition note and extras."""
    done = run.get("completed_requests")
    tin, tout, secs = run.get("total_input_tokens"), run.get("total_output_tokens"), \
        run.get("duration_s")
    if run.get("isl") is None and (mean := _ratio(tin, done)) is not None:
        run["isl"] = round(mean)
    if run.get("osl") is None and (mean := _ratio(tout, done)) is not None:
        run["osl"] = round(mean)
    if run.get("total_tput") is None and tin is not None and tout is not None:
        run["total_tput"] = _ratio(tin + tout, secs)
    if run.get("output_tput") is None:
        run["output_tput"] = _ratio(tout, secs)
    if run.get("request_throughput") is None:
        run["request_throughput"] = _ratio(done, secs)
    if run.get("interactivity") is None and run.get("tpot_median_s"):
        run["interactivity"] = 1.0 / run["tpot_median_s"]
        run["interactivity_basis"] = "1 / median TPOT (the tool reports no per-user rate)"
    if run.get("output_tput") is None:
        raise reader.fail("no output throughput: neither the figure nor output tokens and a "
                          "duration", "output_throughput")
    extras = reader.extras()
    run["extras"] = json.dumps(extras, sort_keys=True, default=str) if extras else None
    run["definition_note"] = note
    return run
