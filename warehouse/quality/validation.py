"""Run validation rules (``warehouse.quality.suites.Rule``) on a snapshot file with great-expectations.

great-expectations is imported here only, lazily: importing it costs seconds, and the API
never needs it. Each rule becomes one expectation; a failed ``error`` rule blocks publishing.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import sys
from pathlib import Path

import duckdb

from warehouse.exceptions import SnapshotError, ValidationFailed
from warehouse.quality.suites import Rule
from warehouse.storage.store import Layout

SAMPLE_ROWS = 5


def _patch_gx_for_duckdb(se) -> None:
    # great-expectations closes its SQLAlchemy connection before fetching a metric's rows; with
    # duckdb-engine the result is gone by then (GX issues #10738, #11579: IndexError in
    # resolve_metric_bundle). Dialects in _PERSISTED_CONNECTION_DIALECTS keep one connection
    # open, which is what DuckDB needs. The check reads `.value` and compares as a string.
    class _DuckDBDialect(str):
        value = "duckdb"

    if not any(getattr(d, "value", None) == "duckdb" for d in se._PERSISTED_CONNECTION_DIALECTS):
        se._PERSISTED_CONNECTION_DIALECTS = (*se._PERSISTED_CONNECTION_DIALECTS,
                                             _DuckDBDialect("duckdb"))


def _expectation(gx, rule: Rule):
    meta = {"severity": rule.severity, "rule": rule.name}
    if rule.kind == "rows":
        return gx.expectations.UnexpectedRowsExpectation(
            unexpected_rows_query=rule.sql, description=rule.name, meta=meta)
    if rule.kind == "in_set":
        return gx.expectations.ExpectColumnValuesToBeInSet(
            column=rule.column, value_set=list(rule.values), meta=meta)
    if rule.kind == "not_null":
        return gx.expectations.ExpectColumnValuesToNotBeNull(column=rule.column, meta=meta)
    if rule.kind == "unique":
        return gx.expectations.ExpectCompoundColumnsToBeUnique(
            column_list=list(rule.columns), meta=meta)
    raise ValueError(f"unknown rule kind {rule.kind!r} in {rule.name!r}")


def _row_counts(path: Path, tables: set[str]) -> dict[str, int | None]:
    """Rows per table or view: a rule over none checked nothing (``no_rows``). None where
    the count fails (a relation missing or failing): its rules run and report it."""
    con = duckdb.connect(str(path), read_only=True)
    counts: dict[str, int | None] = {}
    try:
        for t in tables:
            try:
                counts[t] = con.execute(
                    'SELECT count(*) FROM "' + t.replace('"', '""') + '"'  # noqa: S608 - rule tables
                ).fetchall()[0][0]
            except duckdb.Error:
                counts[t] = None
        return counts
    finally:
        con.close()


def _raw_file_frame(path: Path, layout: Layout):
    import pandas as pd

    con = duckdb.connect(str(path), read_only=True)
    try:
        snaps = con.execute("SELECT id, sha256, raw_path FROM source_snapshot").fetchall()
    finally:
        con.close()
    out = []
    for sid, sha, raw_path in snaps:
        f = layout.root / raw_path
        if not f.resolve().is_relative_to(layout.raw):
            problem = "raw path outside the raw store"
        elif not f.exists():
            problem = "raw file missing"
        elif hashlib.sha256(f.read_bytes()).hexdigest() != sha:
            problem = "raw bytes do not match sha256"
        else:
            problem = "ok"
        out.append({"id": sid, "raw_path": raw_path, "problem": problem})
    return pd.DataFrame(out, columns=["id", "raw_path", "problem"])


ABORTED = "Current transaction is aborted"  # DuckDB, on every query after a failed one


def _raised(info: dict | None) -> str | None:
    """The message of an exception a rule raised, or None: great-expectations reports one
    itself, or, for a rule computed from several metrics (a ``rows`` rule), one per metric,
    keyed by the metric; the one that says why comes before DuckDB's "transaction is aborted"
    of the metrics after it."""
    if not info:
        return None
    if "raised_exception" in info:
        return str(info.get("exception_message")) if info["raised_exception"] else None
    said = [m for v in info.values() if isinstance(v, dict) and (m := _raised(v))]
    return next((m for m in said if ABORTED not in m), said[0] if said else None)


def _summarise(rule: Rule, res, why: str | None = None) -> dict:
    result = dict(res.result or {})
    raised = why or _raised(res.exception_info)
    if raised is not None:  # the rule could not run: it fails, saying why
        return {"suite": rule.table, "expectation": rule.name, "table_name": rule.table,
                "severity": "error", "success": False, "unexpected_count": None,
                "sample": json.dumps({"error": raised})}
    if rule.kind == "rows":
        details = result.get("details", {}).get("unexpected_rows", [])
        count = result.get("observed_value")
        sample = details[:SAMPLE_ROWS]
    else:
        count = result.get("unexpected_count")
        sample = result.get("partial_unexpected_list", [])[:SAMPLE_ROWS]
    if not res.success and count in (None, 0):
        count = len(sample) or None
    return {"suite": rule.table, "expectation": rule.name, "table_name": rule.table,
            "severity": rule.severity, "success": bool(res.success),
            "unexpected_count": int(count) if count is not None else None,
            "sample": json.dumps(sample, default=str) if sample else None}


def _rollback(engine) -> None:
    """Roll back the one DuckDB connection great-expectations keeps (``engine``)."""
    with engine.get_connection() as connection:
        connection.rollback()


def _why(engine, rule: Rule, table: str) -> str | None:
    """Why a rows rule's query fails, asked of DuckDB directly: great-expectations keeps only
    the "transaction is aborted" of the queries after the one that failed as it ran (a value
    that does not convert, say). None when it does not fail here."""
    with engine.get_connection() as connection:
        connection.rollback()
        try:
            # the rule's own SQL (written in code, never from a request) on its table
            query = rule.sql.replace("{batch}", table) if rule.sql else ""
            connection.exec_driver_sql(f"SELECT count(*) FROM ({query})")  # noqa: S608
        except Exception as e:  # noqa: BLE001 - any error is the reason, said as DuckDB says it
            return str(getattr(e, "orig", None) or e)
        finally:
            connection.rollback()
    return None


def _validate(gx, engine, batch, run_id: str, table: str,
              rules: list[Rule]) -> tuple[dict, dict]:
    """Each rule's result on ``batch``, run as one suite, and why each rule that could not run
    failed where great-expectations does not say (``_why``). A rule that raises aborts the
    transaction of the one connection great-expectations keeps for DuckDB, and every query
    after it would fail with it: the connection is rolled back, and each rule that raised runs
    again on its own, so that only a rule that cannot run reports an error."""
    suite = gx.ExpectationSuite(name=f"{run_id}:{table}")
    for rule in rules:
        suite.add_expectation(_expectation(gx, rule))
    outcome = batch.validate(suite, result_format={"result_format": "COMPLETE"})
    by_rule = {(r.expectation_config.meta or {}).get("rule") if r.expectation_config else None: r
               for r in outcome.results}
    why = {}
    raised = [r for r in rules if _raised(by_rule[r.name].exception_info) is not None]
    for rule in raised:
        _rollback(engine)  # the query that raised aborted the connection's transaction
        by_rule[rule.name] = batch.validate(_expectation(gx, rule),
                                            result_format={"result_format": "COMPLETE"})
        said = _raised(by_rule[rule.name].exception_info)
        if said is not None and ABORTED in said and rule.kind == "rows":
            why[rule.name] = _why(engine, rule, table) or said
    if raised:
        _rollback(engine)  # clean for the next table's rules
    return by_rule, why


def run(path: Path, *, layout: Layout, rules: list[Rule], run_id: str = "validate") -> list[dict]:
    """Validate the snapshot at ``path`` against ``rules``; return one result dict per rule."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )
    from great_expectations.execution_engine import sqlalchemy_execution_engine as se

    _patch_gx_for_duckdb(se)
    # Read the raw-store check and the row counts before great-expectations opens the file
    # with its own config.
    frame = _raw_file_frame(path, layout) if any(r.kind == "raw_files" for r in rules) else None
    counts = _row_counts(path, {r.table for r in rules if r.kind != "raw_files"})
    # in memory only: no temporary docs site (a directory under the system's temp dir)
    context = gx.get_context(mode="ephemeral", project_config=DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False)))
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    # Read-only, so validating the published snapshot works while the API has it open.
    source = context.data_sources.add_sql(
        name="snapshot", connection_string=f"duckdb:///{path.resolve()}?access_mode=READ_ONLY")
    results: list[dict] = []
    sql_rules = [r for r in rules if r.kind != "raw_files"]
    for table in dict.fromkeys(r.table for r in sql_rules):
        table_rules = [r for r in sql_rules if r.table == table]
        if counts[table] == 0:  # each rule holds over no rows: said as such, nothing to run
            results += [{"suite": table, "expectation": rule.name, "table_name": table,
                         "severity": rule.severity, "success": True, "unexpected_count": 0,
                         "sample": None, "rows_checked": 0} for rule in table_rules]
            continue
        asset = source.add_table_asset(name=table, table_name=table)
        batch = asset.add_batch_definition_whole_table("all").get_batch()
        by_rule, why = _validate(gx, source.get_execution_engine(), batch, run_id, table,
                                 table_rules)
        results += [{**_summarise(rule, by_rule[rule.name], why.get(rule.name)),
                     "rows_checked": counts[table]} for rule in table_rules]

    for rule in (r for r in rules if r.kind == "raw_files" and frame is not None):
        assert frame is not None
        pandas_source = context.data_sources.add_pandas(name="raw_files")
        batch = pandas_source.add_dataframe_asset(name="raw").add_batch_definition_whole_dataframe(
            "all").get_batch(batch_parameters={"dataframe": frame})
        res = batch.validate(gx.expectations.ExpectColumnValuesToBeInSet(
            column="problem", value_set=["ok"], meta={"severity": rule.severity}),
            result_format={"result_format": "COMPLETE"})
        bad = frame[frame.problem != "ok"].head(SAMPLE_ROWS).to_dict("records")
        results.append({"suite": "source_snapshot", "expectation": rule.name,
                        "table_name": "source_snapshot", "severity": rule.severity,
                        "success": bool(res.success),
                        "unexpected_count": int(res.result.get("unexpected_count") or 0),
                        "sample": json.dumps(bad) if bad else None})
    return results


def _child(path: str, root: str, run_id: str, rules: list[Rule], tmp: str | None, conn) -> None:
    import logging

    logging.disable(logging.WARNING)
    _own_temporaries(tmp)
    try:
        conn.send(("ok", run(Path(path), layout=Layout(Path(root)), rules=rules, run_id=run_id)))
    except BaseException as e:  # report every failure to the parent, which raises it
        conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def _own_temporaries(tmp: str | None) -> None:
    """In a validation process (one validation each): a temporary file anything in it makes
    goes to the data dir's ``tmp/`` (None: the data dir cannot be written, the system's temp
    dir then), and tqdm (GX's progress bars, switched off) gets a thread lock, not the
    multiprocessing lock it would create, a POSIX semaphore under /dev/shm."""
    import os
    import tempfile
    import threading

    import tqdm

    if tmp is not None:
        os.environ["TMPDIR"] = tempfile.tempdir = tmp
    tqdm.tqdm.set_lock(threading.RLock())


_FORKSERVER = None


def _context():
    """A forkserver that has imported great-expectations once; each validation forks a fresh
    child from it, so repeated refreshes in one process (a scheduler loop, `serve
    --refresh-every`, the tests) pay GX's multi-second import only once. Its socket is
    multiprocessing's, in the system's temp dir (``pymp-*/listener-*``): the one thing a
    validation writes outside the data dir."""
    global _FORKSERVER
    if _FORKSERVER is None:
        _FORKSERVER = multiprocessing.get_context("forkserver")
        _FORKSERVER.set_forkserver_preload(["great_expectations", "warehouse.quality.validation"])
    return _FORKSERVER


def _forkserver_usable() -> bool:
    """Whether the forkserver can start children here: they re-import the main module from
    its file when it has one, so a main with no file (``python -c``, a pytest-xdist worker,
    a REPL) or with a file that exists works; a named file that does not exist (``python
    -``: ``<stdin>``) does not."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return main_file is None or Path(main_file).exists()


def prewarm() -> None:
    """Start the forkserver now, so its great-expectations import runs while the refresh is
    still fetching and parsing (a refresh calls this once a source has changed). Idempotent."""
    if _forkserver_usable():
        from multiprocessing import forkserver

        _context()
        forkserver.ensure_running()


def _temp_dir(layout: Layout) -> str | None:
    """The data dir's ``tmp/`` for a validation's temporary files; None when the data dir
    cannot be written (a read-only mount: validating only reads)."""
    try:
        return str(layout.temp_dir())
    except SnapshotError:
        return None


def run_isolated(path: Path, *, layout: Layout, rules: list[Rule],
                 run_id: str = "validate") -> list[dict]:
    """``run`` in a child process: great-expectations opens the file through duckdb-engine with
    its own connection settings, which DuckDB will not mix with other connections to the same
    file in one process; a child also keeps GX's memory out of the caller. Its temporary files
    go to the data dir's ``tmp/`` (``_own_temporaries``)."""
    tmp = _temp_dir(layout)
    if not _forkserver_usable():
        return _run_subprocess(path, layout=layout, rules=rules, run_id=run_id, tmp=tmp)
    ctx = _context()
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child,
                       args=(str(path), str(layout.root), run_id, rules, tmp, child))
    proc.start()
    child.close()
    try:
        status, payload = parent.recv()
    except EOFError:
        status, payload = "error", f"the validation process died (exit code {proc.exitcode})"
    proc.join()
    if status != "ok":
        raise ValidationFailed(f"validation could not run: {payload}")
    return payload


def _run_subprocess(path: Path, *, layout: Layout, rules: list[Rule], run_id: str,
                    tmp: str | None) -> list[dict]:
    """The same in a plain ``python -m`` child, for callers whose main module names a file that
    does not exist (``python -``: the forkserver would re-import it from ``<stdin>``). The
    rules go to the child as JSON on its standard input."""
    import dataclasses
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "warehouse.quality.validation", str(path), str(layout.root), run_id,
         *([tmp] if tmp else [])],
        input=json.dumps([dataclasses.asdict(r) for r in rules]),
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ValidationFailed(
            "validation could not run: " + (proc.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(proc.stdout)


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    _own_temporaries(sys.argv[4] if len(sys.argv) > 4 else None)
    _path, _root, _run = sys.argv[1:4]
    _rules = [Rule.from_json(r) for r in json.load(sys.stdin)]
    print(json.dumps(run(Path(_path), layout=Layout(Path(_root)), rules=_rules, run_id=_run)))
