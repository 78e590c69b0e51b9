"""Reading one run of a result file: every figure checked and converted once.

``RunReader`` wraps one run's JSON object with the file name and run index, so every refusal
names the file, the run and the field (``ResultFileError``). Figures must be finite and not
negative; times are converted to seconds from the unit the tool states (or the unit its key
names); a unit the reader does not know is refused, never guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from warehouse.exceptions import ResultFileError

# Seconds per unit, for every time unit a supported tool writes.
TIME_UNITS = {"s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0, "ms": 1e-3,
              "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
# request_rate values meaning no fixed rate (every request sent at once, or a trace's own
# timestamps): vLLM writes the string "inf", SGLang json.dumps(float("inf")), i.e. the bare
# literal Infinity (its --request-rate default), or "trace" with --use-trace-timestamps.
NO_FIXED_RATE = ("inf", "infinity", "trace")
# InferenceX's percentile columns and the suffix each has in our column names.
PERCENTILES = (("median", "median"), ("p90", "p90"), ("p99", "p99"), ("p999", "p999"))
LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")


@dataclass
class RunReader:
    """One run of one file. ``used`` collects the keys read, so the rest can go to extras."""

    file: str
    run: int | None
    data: dict
    used: set[str] = field(default_factory=set)

    def fail(self, message: str, key: str | None = None) -> ResultFileError:
        """The error for this run (and field)."""
        return ResultFileError(message, file=self.file, run=self.run, field=key)

    def has(self, key: str) -> bool:
        """Whether the run has ``key`` with a value (not null)."""
        return self.data.get(key) is not None

    def raw(self, key: str, required: bool = False) -> Any:
        """The value of ``key`` as written (None when absent), refused when required."""
        self.used.add(key)
        value = self.data.get(key)
        if value is None and required:
            raise self.fail("required field missing", key)
        return value

    def number(self, key: str, required: bool = False, scale: float = 1.0) -> float | None:
        """A figure: finite, not negative, times ``scale``."""
        return self.check(self.raw(key, required), key, scale)

    def check(self, value: Any, key: str, scale: float = 1.0) -> float | None:
        """``value`` (from ``key``) as a finite, non-negative float times ``scale``."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.fail(f"not a number: {value!r}", key)
        try:
            number = float(value)
        except ValueError:
            raise self.fail(f"not a number: {value!r}", key) from None
        if not math.isfinite(number):
            raise self.fail(f"not a finite number: {value!r}", key)
        if number < 0:
            raise self.fail(f"negative figure: {value!r}", key)
        return number * scale

    def request_rate(self, key: str = "request_rate") -> float | None:
        """The fixed request rate (requests/s), or None when the run had none (``NO_FIXED_RATE``,
        or positive infinity: the one non-finite figure accepted, for this key only)."""
        rate = self.raw(key)
        if isinstance(rate, str) and rate.strip().lower() in NO_FIXED_RATE:
            return None
        if isinstance(rate, float) and rate == math.inf:
            return None
        return self.check(rate, key)

    def count(self, key: str, required: bool = False) -> int | None:
        """A whole count (requests, concurrency)."""
        number = self.number(key, required)
        return None if number is None else round(number)

    def unit(self, unit: Any, key: str) -> float:
        """Seconds per ``unit`` (a time unit the tool states), refused when unknown."""
        if not isinstance(unit, str) or unit.strip().lower() not in TIME_UNITS:
            raise self.fail(f"unknown time unit {unit!r} (known: {', '.join(TIME_UNITS)})", key)
        return TIME_UNITS[unit.strip().lower()]

    def extras(self) -> dict:
        """The run's keys not read into a column."""
        return {k: v for k, v in self.data.items() if k not in self.used}


def timestamp(reader: RunReader, key: str, value: Any, fmt: str | None = None) -> datetime | None:
    """A run time: epoch seconds, ISO 8601, or ``fmt``; without a zone, read as UTC."""
    if value is None:
        return None
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(float(value), UTC)
        when = datetime.strptime(value, fmt) if fmt else datetime.fromisoformat(str(value))
    except (ValueError, TypeError, OverflowError, OSError):
        raise reader.fail(f"not a time: {value!r}", key) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def ms_family(reader: RunReader, names: dict[str, str]) -> dict[str, float | None]:
    """vLLM/SGLang latency keys (``median_ttft_ms``, ``p99_ttft_ms``, ``p99.9_ttft_ms``…): the
    columns ``ttft_median_s``… in seconds, for each metric name the tool uses (``names``: our
    metric → the tool's)."""
    out: dict[str, float | None] = {}
    for ours, theirs in names.items():
        for col, prefix in (("median", "median"), ("p90", "p90"), ("p99", "p99"),
                            ("p999", "p99.9")):
            out[f"{ours}_{col}_s"] = reader.number(f"{prefix}_{theirs}_ms", scale=1e-3)
    return out
