"""MLPerf rules: latency limits that make sense."""

from __future__ import annotations

from warehouse.quality.suites import Rule, rows


def rules() -> list[Rule]:
    """The rules of benchmark_rule."""
    return [
        rows("benchmark_rule: TTFT limit > TPOT limit > 0", "benchmark_rule",
             "SELECT id, ttft_ms, tpot_ms FROM {batch} WHERE NOT (ttft_ms > tpot_ms AND tpot_ms > 0)"),
    ]
