"""The validation gate: real data passes; each broken rule rejects the refresh, names the rule
and the row, and leaves the previous snapshot serving unchanged."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest

from ingest.context import LoadContext
from ingest.refresh import all_rules, refresh
from tests.conftest import make_settings
from tests.helpers import no_op, replace_loads
from warehouse.figures import derived
from warehouse.storage.store import Layout


def test_real_data_passes_every_rule_and_the_run_lists_each_one(full_warehouse):
    """Every rule (errors and warnings) is run and recorded once; on the real files none
    fails, which the test checks independently for the two warning rules about MLPerf rows."""
    import csv

    import yaml

    from tests.helpers import REPO, SUMMARY_CSV

    run = Layout(full_warehouse / "var").read_runs()[-1]
    assert run["status"] == "published"
    recorded = {v["expectation"]: v for v in run["validation"]}
    rules = all_rules()
    assert len(recorded) == len(run["validation"]) == len(rules)
    assert {r.name: r.severity for r in rules} == {k: v["severity"] for k, v in recorded.items()}
    assert [k for k, v in recorded.items() if not v["success"]] == []
    warnings = {r.name for r in rules if r.severity == "warning"}
    assert "mlperf_result: total_accelerators = nodes x accelerators per node" in warnings
    with SUMMARY_CSV.open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert all(int(r["number_of_nodes"]) * int(r["accelerators_per_node"])
               == int(r["total_accelerators"]) for r in rows if r["accelerators_per_node"])
    curated = yaml.safe_load((REPO / "data" / "accelerators.yaml").read_text())
    spelled = {n for a in curated["accelerators"] for n in a.get("mlperf_names", [])}
    spelled |= {n["name"] for n in curated.get("special_mlperf_names", [])}
    assert {r["accelerator_model_name"] for r in rows} <= spelled


def test_a_failed_warning_is_published_and_listed(full_copy, client_for, monkeypatch):
    tmp, sources = full_copy
    settings = make_settings(tmp, sources)
    replace_loads(monkeypatch, mlperf=no_op, mlperf_rules=no_op, azure_prices=no_op)
    _stage(monkeypatch, f"UPDATE mlperf_result SET total_accelerators = total_accelerators + 1 "
                        f"WHERE id = ({GB200})")
    report = refresh(settings)
    assert report.status == "published" and report.exit_code == 0
    rule = "mlperf_result: total_accelerators = nodes x accelerators per node"
    [failed] = [v for v in report.validation if v["expectation"] == rule]
    assert failed["severity"] == "warning" and not failed["success"]
    assert failed["unexpected_count"] == 1
    summary = client_for(settings).get("/healthz").json()["validation"]
    assert summary["errors"] == 0 and summary["warnings"] == [rule]
    # the tables this warehouse has no rows in (InferenceX and the SkyPilot catalog off, no
    # claim ever edited, no round re-published, no self-measured run imported)
    assert summary["no_rows"] == ["claim_history", "cloud_price", "inferencex_observation",
                                  "mlperf_result_revision", "self_observation"]


def _stage(monkeypatch, sql: str, params: list | None = None) -> None:
    """Add a loader that changes the staged snapshot as a buggy source would."""
    def inject(ctx: LoadContext) -> None:
        ctx.con.execute(sql, params or [])
        ctx.outcome.status = "updated"
        ctx.outcome.rows = 1

    replace_loads(monkeypatch, curated=inject)


GB200 = ("SELECT id FROM mlperf_result WHERE platform = 'GB200-NVL72_GB200-186GB_aarch64x72_TRT' "
         "AND model_id = 'deepseek-r1' AND scenario = 'Interactive' AND organization = 'NVIDIA'")

def _kept(status: str, renamed_to: str, version: str = "json_object('id', id, 'round', round)",
          valid_from: str = "NULL") -> str:
    """A kept version of the GB200 row, written as a buggy loader would."""
    return ("INSERT INTO mlperf_result_revision (id, result_id, round, status, valid_from, "
            "valid_to, result, units, evidence, version, source_snapshot_id, renamed_to) "
            f"SELECT id || '@x', id, round, '{status}', {valid_from}, TIMESTAMP '2026-01-01', "
            f"result, units, evidence, {version}, source_snapshot_id, {renamed_to} "
            f"FROM mlperf_result WHERE id = ({GB200})")


# another result of the GB200 row's round
OTHER = (f"(SELECT min(id) FROM mlperf_result WHERE round = (SELECT round FROM mlperf_result "
         f"WHERE id = ({GB200})) AND id <> ({GB200}))")

VIOLATIONS = {
    "mlperf row relabelled vendor_claim": (
        f"UPDATE mlperf_result SET evidence = 'vendor_claim' WHERE id = ({GB200})",
        "every mlperf_result row is measured", "mlperf_result"),
    "claim labelled measured": (
        "UPDATE claim SET evidence = 'measured' WHERE id = 'cerebras-llama3.1-405b-969'",
        "no row from a curated file is measured", "claim"),
    "row with no source snapshot": (
        "UPDATE claim SET source_snapshot_id = 'nowhere' WHERE id = 'cerebras-llama3.1-405b-969'",
        "claim: every source snapshot id exists in source_snapshot", "claim"),
    "negative result": (
        f"UPDATE mlperf_result SET result = -1 WHERE id = ({GB200})",
        "mlperf_result: result is positive and finite", "mlperf_result"),
    "unknown unit": (
        f"UPDATE mlperf_result SET units = 'Furlongs/s' WHERE id = ({GB200})",
        "mlperf_result: units are known", "mlperf_result"),
    "duplicate natural key": (
        f"INSERT INTO mlperf_result SELECT * REPLACE ('dup0000000000000' AS id) "
        f"FROM mlperf_result WHERE id = ({GB200})",
        "mlperf_result: natural key is unique", "mlperf_result"),
    "overlapping price window": (
        "INSERT INTO azure_price SELECT * REPLACE ('overlap000000000' AS id, "
        "valid_from - INTERVAL 1 DAY AS valid_from) FROM azure_price "
        "WHERE arm_sku_name = 'Standard_ND96isr_H200_v5' AND valid_to IS NULL",
        "azure_price: no overlapping validity windows for one price key", "azure_price"),
    "claim checked before it was made": (
        "UPDATE claim SET checked_on = DATE '2024-01-01' WHERE id = 'cerebras-llama3.1-405b-969'",
        "claim: claimed_on <= checked_on <= today", "claim"),
    "rename that leads nowhere": (
        _kept("renamed", "'nowhere000000000'"),
        "mlperf_result_revision: a rename leads to a result of its round, stored or kept",
        "mlperf_result_revision"),
    "rename to another round's result": (
        _kept("renamed", "'elsewhere0000000'") + "; INSERT INTO mlperf_result SELECT * REPLACE "
        f"('elsewhere0000000' AS id, 'v6.0' AS round) FROM mlperf_result WHERE id = ({GB200})",
        "mlperf_result_revision: a rename leads to a result of its round, stored or kept",
        "mlperf_result_revision"),
    "revision that names a rename": (
        _kept("revised", OTHER),
        "mlperf_result_revision: renamed_to is set exactly on renames, never to the id itself",
        "mlperf_result_revision"),
    "rename with nowhere to go": (
        _kept("renamed", "NULL"),
        "mlperf_result_revision: renamed_to is set exactly on renames, never to the id itself",
        "mlperf_result_revision"),
    "rename to itself": (
        _kept("renamed", "id"),
        "mlperf_result_revision: renamed_to is set exactly on renames, never to the id itself",
        "mlperf_result_revision"),
    "kept version of another row": (
        _kept("revised", "NULL", version=f"json_object('id', {OTHER}, 'round', round)"),
        "mlperf_result_revision: the kept version is the result's own row",
        "mlperf_result_revision"),
    "kept version valid after it was replaced": (
        _kept("withdrawn", "NULL", valid_from="TIMESTAMP '2026-02-01'"),
        "mlperf_result_revision: valid_from <= valid_to", "mlperf_result_revision"),
    "unknown revision state": (
        _kept("moved", "NULL"),
        "mlperf_result_revision: status is revised, withdrawn or renamed",
        "mlperf_result_revision"),
}


@pytest.mark.parametrize("violation", VIOLATIONS)
def test_violation_rejects_and_keeps_serving(full_copy, client_for, monkeypatch, violation):
    sql, rule, table = VIOLATIONS[violation]
    tmp, sources = full_copy
    settings = make_settings(tmp, sources)
    client = client_for(settings)
    before = client.get("/v1/results?limit=1000&sort=id").json()
    claims_before = client.get("/v1/claims?limit=1000").json()
    current = Layout(settings.data_path).read_current()
    replace_loads(monkeypatch, mlperf=no_op, mlperf_rules=no_op, azure_prices=no_op)
    _stage(monkeypatch, sql)

    report = refresh(settings)

    assert report.status == "rejected" and report.exit_code == 1
    assert rule in report.message
    [failed] = [v for v in report.validation if v["expectation"] == rule]
    assert failed["severity"] == "error" and failed["unexpected_count"] >= 1
    assert failed["sample"]
    assert Layout(settings.data_path).read_current() == current
    assert client.get("/v1/results?limit=1000&sort=id").json() == before
    assert client.get("/v1/claims?limit=1000").json() == claims_before
    served = client.get(f"/v1/refreshes/{report.id}/validation").json()
    assert served["status"] == "rejected" and served["errors"] >= 1
    assert rule in {v["expectation"] for v in served["rows"] if not v["success"]}
    assert not list(Layout(settings.data_path).snapshots.glob("*.partial"))


def test_sample_identifies_the_row(full_copy, monkeypatch):
    tmp, sources = full_copy
    settings = make_settings(tmp, sources)
    replace_loads(monkeypatch, mlperf=no_op, mlperf_rules=no_op, azure_prices=no_op)
    _stage(monkeypatch, VIOLATIONS["negative result"][0])
    report = refresh(settings)
    [failed] = [v for v in report.validation
                if v["expectation"] == "mlperf_result: result is positive and finite"]
    sample = json.loads(failed["sample"])
    assert sample[0]["result"] == -1 and len(sample[0]["id"]) == 16


def test_a_rule_that_cannot_run_fails_saying_why_and_alone(full_warehouse):
    """A rows rule great-expectations cannot run (here its batch aliased without a join:
    great-expectations names the batch ``subselect`` then) fails with the database's error
    as its sample, not as a violation with no rows; the rules after it, on its table and on
    the next, still run (DuckDB aborts the transaction of the connection they share)."""
    from warehouse.quality import validation
    from warehouse.quality.suites import in_set, rows

    layout = Layout(full_warehouse / "var")
    broken = rows("claim: aliased without a join", "claim",
                  "SELECT c.id FROM {batch} c WHERE c.value < 0")
    same_table = rows("claim: no negative value", "claim", "SELECT id FROM {batch} WHERE value < 0")
    next_table = rows("mlperf_result: results are positive", "mlperf_result",
                      "SELECT id FROM {batch} WHERE result <= 0")
    violated = in_set("mlperf_result: Offline only", "mlperf_result", "scenario", ["Offline"])
    # fails as it runs (its first query aborts the transaction, its count then fails too)
    converting = rows("mlperf_result: names as numbers", "mlperf_result",
                      "SELECT id FROM {batch} WHERE CAST(system_name AS INTEGER) > 0")
    out = {r["expectation"]: r for r in validation.run_isolated(
        layout.read_current().path, layout=layout,
        rules=[broken, same_table, next_table, violated, converting])}
    failed = out[broken.name]
    assert not failed["success"] and failed["severity"] == "error"
    assert failed["unexpected_count"] is None
    assert "Parser Error" in json.loads(failed["sample"])["error"]
    said = json.loads(out[converting.name]["sample"])["error"]
    assert "Conversion Error" in said and "transaction is aborted" not in said, said
    for fine in (same_table, next_table):
        assert out[fine.name]["success"] and out[fine.name]["unexpected_count"] == 0
    con = duckdb.connect(str(layout.read_current().path), read_only=True)
    [(not_offline,)] = con.execute(
        "SELECT count(*) FROM mlperf_result WHERE scenario <> 'Offline'").fetchall()
    con.close()
    assert not_offline > 0 and out[violated.name]["unexpected_count"] == not_offline


def test_altered_raw_bytes_reject(full_copy, monkeypatch):
    tmp, sources = full_copy
    settings = make_settings(tmp, sources)
    layout = Layout(settings.data_path)
    raw = next(p for p in layout.raw.rglob("*") if p.is_file())
    raw.write_bytes(raw.read_bytes() + b"tampered")
    replace_loads(monkeypatch, mlperf=no_op, mlperf_rules=no_op, azure_prices=no_op)
    _stage(monkeypatch, "UPDATE claim SET note = 'touched' WHERE id = 'cerebras-llama3.1-405b-969'")
    report = refresh(settings)
    assert report.status == "rejected"
    rule = "every source snapshot's raw bytes exist and match their sha256"
    [failed] = [v for v in report.validation if v["expectation"] == rule]
    assert not failed["success"] and failed["unexpected_count"] == 1
    assert json.loads(failed["sample"])[0]["problem"] == "raw bytes do not match sha256"


def test_derived_row_claiming_measured_from_a_claim_rejects(full_copy, monkeypatch):
    tmp, sources = full_copy
    settings = make_settings(tmp, sources)
    sql, comment, cols = derived.VIEWS["claim_check"]
    buggy = sql.replace("""CASE WHEN num.value IS NOT NULL
            THEN 'derived: vendor_spec + ' || c.evidence
            ELSE 'derived: ' || c.evidence END AS basis""", "'derived: measured' AS basis")
    assert buggy != sql
    monkeypatch.setitem(derived.VIEWS, "claim_check", (buggy, comment, cols))
    replace_loads(monkeypatch, mlperf=no_op, mlperf_rules=no_op, azure_prices=no_op)
    _stage(monkeypatch, "UPDATE claim SET note = 'touched' WHERE id = 'cerebras-llama3.1-405b-969'")
    report = refresh(settings)
    assert report.status == "rejected"
    assert "derived rows report the weakest evidence among their inputs" in report.message


def test_validate_command_prints_table_and_exit_code(full_warehouse):
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(full_warehouse / "var")}
    done = subprocess.run([Path(sys.executable).parent / "perfledger", "validate"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "every mlperf_result row is measured" in done.stdout
    assert "natural key is unique" in done.stdout


# Loaded by every Python process of a validation (the forkserver is a fresh interpreter, its
# children forks of it): an audit hook that logs each path a process creates or opens to
# write, and its pid.
AUDIT = """
import os, sys
LOG = os.environ.get("PL_AUDIT_LOG")
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT
busy = []

def hook(event, args):
    if busy or event not in ("open", "os.mkdir", "tempfile.mkdtemp", "tempfile.mkstemp"):
        return
    path = args[0]
    if event == "open":
        mode, flags = args[1], args[2]
        if not (isinstance(mode, str) and any(c in mode for c in "wax+")
                or mode is None and isinstance(flags, int) and flags & WRITE):
            return
    if not isinstance(path, str):
        return
    busy.append(1)
    try:
        fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, f"{os.getpid()} {event} {os.path.abspath(path)}\\n".encode())
        os.close(fd)
    finally:
        busy.clear()

if LOG:
    with open(LOG, "a") as f:
        f.write(f"{os.getpid()} started -\\n")
    sys.addaudithook(hook)
"""

VALIDATE = """
import sys
from pathlib import Path
from ingest.refresh import all_rules
from warehouse.quality import validation
from warehouse.storage.store import Layout
layout = Layout(Path(sys.argv[1]))
results = validation.run_isolated(layout.read_current().path, layout=layout, rules=all_rules())
print(sum(r["success"] for r in results), len(results))
"""


def test_validation_writes_nothing_outside_the_data_dir_but_its_socket(full_copy, tmp_path):
    """Every path the validation's processes create or open to write (the caller, its
    forkserver and the forked child: great-expectations, tempfile, tqdm, SQLAlchemy) is in
    the data dir, but for the forkserver's socket (multiprocessing's pymp-*/listener-* in the
    system's temp dir, removed at exit)."""
    tmp, _ = full_copy
    data = (tmp / "var").resolve()
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(AUDIT)
    log = tmp_path / "written.log"
    system_tmp = Path(tempfile.mkdtemp(prefix="pl", dir="/tmp"))  # short: a socket's path
    try:
        env = {**os.environ, "TMPDIR": str(system_tmp), "PL_AUDIT_LOG": str(log),
               "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join([str(hooks), *sys.path])}
        done = subprocess.run([sys.executable, "-c", VALIDATE, str(data)], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        passed, rules = map(int, done.stdout.split())
        assert rules == len(all_rules()) and passed == rules
        written = [line.split(" ", 2) for line in log.read_text().splitlines()]
        assert len({pid for pid, event, _ in written if event == "started"}) >= 2  # + forkserver
        outside = [(event, Path(path)) for _, event, path in written if event != "started"
                   and not Path(path).is_relative_to(data) and path != os.devnull]
        # tempfile's probe of the system's temp dir, and the socket's directory made there
        assert outside and all(path.parent == system_tmp for _, path in outside), outside
        made = {path for event, path in outside if event != "open"}
        assert len(made) == 1 and next(iter(made)).name.startswith("pymp-"), outside
    finally:
        shutil.rmtree(system_tmp)
