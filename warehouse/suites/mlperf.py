"""MLPerf results: values, units, normalised sets, the natural key."""

from __future__ import annotations

from warehouse.suites import WARNING, Rule, in_set, rows, unique

SUITE = "mlperf"
T = "mlperf_result"
THROUGHPUT_UNITS = ("Tokens/s", "Samples/s", "Queries/s", "Tasks/s")
LATENCY_UNITS = ("Latency (ms)", "Latency (s)")
POWER_UNITS = ("Watts", "millijoules", "Joules")
KNOWN_UNITS = THROUGHPUT_UNITS + LATENCY_UNITS + POWER_UNITS


def rules() -> list[Rule]:
    return [
        rows("mlperf_result: result is positive and finite", T,
             "SELECT id, result FROM {batch} WHERE NOT (result > 0) OR NOT isfinite(result)"),
        in_set("mlperf_result: units are known", T, "units", KNOWN_UNITS),
        rows("mlperf_result: Offline/Server/Interactive report throughput units", T,
             "SELECT id, scenario, units FROM {batch} WHERE NOT is_power AND scenario IN "
             "('Offline', 'Server', 'Interactive') AND units NOT IN "
             f"{THROUGHPUT_UNITS}"),
        rows("mlperf_result: SingleStream/MultiStream report latency units", T,
             "SELECT id, scenario, units FROM {batch} WHERE NOT is_power AND scenario IN "
             f"('SingleStream', 'MultiStream') AND units NOT IN {LATENCY_UNITS}"),
        rows("mlperf_result: Watts/millijoules only on power rows", T,
             f"SELECT id, units FROM {{batch}} WHERE (units IN {POWER_UNITS}) <> is_power"),
        in_set("mlperf_result: scenario is normalised", T, "scenario",
               ("Offline", "Server", "Interactive", "SingleStream", "MultiStream")),
        in_set("mlperf_result: division is closed or open", T, "division", ("closed", "open")),
        in_set("mlperf_result: availability is available, preview or rdi", T, "availability",
               ("available", "preview", "rdi")),
        unique("mlperf_result: natural key is unique", T,
               ("round", "division", "organization", "platform", "model_id", "scenario",
                "units")),
        rows("mlperf_result: total_accelerators = nodes x accelerators per node", T,
             "SELECT id, number_of_nodes, accelerators_per_node, total_accelerators FROM {batch} "
             "WHERE number_of_nodes * accelerators_per_node <> total_accelerators",
             severity=WARNING),
        rows("mlperf_result: every single-accelerator row maps to an accelerator id", T,
             "SELECT id, accelerator_model_name FROM {batch} "
             "WHERE accelerator_mix = 'single' AND accelerator_id IS NULL", severity=WARNING),
    ]
