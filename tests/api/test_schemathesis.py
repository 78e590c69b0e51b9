"""Schemathesis, every check (``st run --checks all``), against a served snapshot: no 5xx,
every status and body as the OpenAPI document declares it (errors typed with the one error
envelope), every request the schema allows accepted and every one it forbids refused, 405s
with ``Allow``. The run is seeded, so a failure reproduces. Its phases are examples, coverage
and fuzzing: the API is read-only, so the stateful phase only chains inferred links from response
fields into free-text query parameters, where it reported a value that is a valid string on the
wire (``metric=[Êø…`` on /v1/claims: Schemathesis judges the unserialised value, its issue
#4600) as a schema-violating request accepted.

Where a request of valid form names data the snapshot does not hold, the API answers 422 with
a message saying what is known; OpenAPI cannot declare it, so those operations also expect 422
for valid data (``CONFIG``): calculators with warehouse inputs (an unknown hardware or model id,
inputs needed together, documented in each description) and the routes taking ``as_of`` (a
moment before the first snapshot). A query string past the API's bound is refused with 414,
which the schema declares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.api.test_explorer import serve_data_dir
from tests.helpers import copy_data_dir

CONFIG = """
[checks.negative_data_rejection]  # the defaults, and 414: a query string too long is refused
expected-statuses = [400, 401, 403, 404, 405, 406, 409, 414, 415, 422, 428, 429, "5xx"]

[[operations]]
include-path-regex = "^/v1/(calc/(decode-bound|batch|prefill|ridge|kv-transfer|capacity|bandwidth-needed)|results|claims|observations|frontier|claim-observations)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", 404, 422]
"""
SEED = "20261205"


def test_every_check_passes_against_a_served_snapshot(all_sources_warehouse, tmp_path):
    copy_data_dir(all_sources_warehouse / "var", tmp_path / "var")
    (tmp_path / "schemathesis.toml").write_text(CONFIG)
    proc, base = serve_data_dir(tmp_path / "var", PERFLEDGER_API_ACCESS_LOG="false")
    try:
        run = subprocess.run(
            [Path(sys.executable).parent / "st", "--config-file", "schemathesis.toml", "--no-color",
             "run", f"{base}/openapi.json", "--checks", "all", "--max-examples", "8",
             "--phases", "examples,coverage,fuzzing",
             "--workers", "1", "--seed", SEED, "--generation-database", "none",
             "--suppress-health-check", "all"],
            cwd=tmp_path, capture_output=True, text=True, timeout=600)
    finally:
        proc.terminate()
        proc.wait(15)
    assert run.returncode == 0, run.stdout[-20000:]
    summary = run.stdout[run.stdout.find("=== SUMMARY"):]
    assert "Tested: 38" in summary and "Failures:" not in summary, summary
