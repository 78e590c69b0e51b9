"""Import and removal, each one source of one refresh run: staging → validate → publish.

``import_spec``/``remove_spec`` build a ``SourceSpec`` whose ``load`` writes into the staged
snapshot; ``ingest.refresh.refresh(settings, specs=[…])`` runs it with the lock, the staging
copy, the derived views, the validation suites and the atomic publish every refresh has, so the
API keeps serving the last good snapshot and a rejected import publishes nothing.

Per file: its bytes are read and hashed; a file whose sha256 is already imported (and not
removed) is left as it is (idempotent by content); otherwise it is parsed whole, and only a
file that parses stores anything: its bytes in the raw store, a ``source_snapshot`` row, its
runs in ``self_observation`` and one ``self_import`` row. A bad file is reported (file, run,
field) and the other files proceed; the run is then ``partial`` (exit code 1).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from ingest.context import LoadContext, SourceConfig, SourceSpec
from ingest.http import Raw
from ingest.selfmeasured import detect, suite
from ingest.selfmeasured.runs import Parsed
from warehouse.exceptions import ImportRefused, ResultFileError
from warehouse.model.vocabulary import Evidence, ImportOutcome
from warehouse.storage.db import fetch_dicts, insert_rows

SOURCE = "selfmeasured"
# 3: LLMPerf counts that are not the model's tokens stay empty; AIPerf's clean runs and
# cancellations. 4: a count SGLang's server_info contradicts is refused. The same bytes
# imported again by a newer parser are parsed again.
PARSER_VERSION = "selfmeasured/4"
UNSTATED = "unstated"


@dataclass(frozen=True)
class Statement:
    """What the importer states about the runs: the files record none of it (SGLang's later
    files state their server's GPUs, checked against ``count``: ``_check_gpus``)."""

    accelerator: str
    count: int
    model: str
    framework: str | None = None
    precision: str | None = None
    note: str | None = None

    def same_as(self, row: dict) -> bool:
        """Whether an earlier import of the same bytes stated the same hardware and model."""
        return (row["accelerator_id"].lower(), row["gpus"], row["model"]) == \
            (self.accelerator.lower(), self.count, self.model)


def import_spec(paths: list[Path], stated: Statement) -> SourceSpec:
    """The source that imports ``paths`` with ``stated`` hardware (for ``refresh(specs=…)``)."""
    return SourceSpec(name=SOURCE, config=SourceConfig, rules=suite.rules,
                      load=partial(load_files, paths=paths, stated=stated),
                      doc="self-measured benchmark result files (perfledger import)")


def remove_spec(import_id: str) -> SourceSpec:
    """The source that removes one import (its runs go, its record stays, marked removed)."""
    return SourceSpec(name=SOURCE, config=SourceConfig, rules=suite.rules,
                      load=partial(remove, import_id=import_id),
                      doc="removal of a self-measured import (perfledger import --remove)")


def _known(ctx: LoadContext, sql: str) -> dict[str, str]:
    return {str(r[0]).lower(): str(r[0]) for r in ctx.reader.execute(sql).fetchall() if r[0]}


def _refuse_system(ctx: LoadContext, typed: str) -> None:
    """Refuse a system or rack id: ``--count`` counts accelerators (every GPU), so with a
    system id it could mean systems or GPUs, and either guess is off by the system's
    accelerator count for the other reading (per-GPU figures and costs divided by it)."""
    row = ctx.reader.execute("SELECT id, kind, accelerator_id, accelerator_count FROM hardware "
                             "WHERE lower(id) = ? AND kind <> 'accelerator'",
                             [typed.lower()]).fetchone()
    if row is None:
        return
    hw, kind, accelerator, count = row
    if accelerator and count:
        raise ImportRefused(
            f"{hw!r} is a {kind} of {count} x {accelerator}, not an accelerator: state the "
            f"accelerator and every one the run used, e.g. --accelerator {accelerator} --count "
            f"{count} for one {hw} ({count} x N for N of them)")
    raise ImportRefused(f"{hw!r} is a {kind}, not an accelerator, and the warehouse does not "
                        "record what it is built from: state the accelerator id and how many "
                        "the run used")


def check_statement(ctx: LoadContext, stated: Statement) -> tuple[Statement, str]:
    """The statement with the accelerator's id and the model as the warehouse spells them
    (every join and filter compares them as stored), and the model's mapping (mapped or
    unmapped); refuses an unknown accelerator, a system or rack id, or a bad count."""
    if stated.count < 1:
        raise ImportRefused(f"--count must be at least 1 (got {stated.count})")
    _refuse_system(ctx, stated.accelerator)
    accelerators = _known(ctx, "SELECT id FROM hardware WHERE kind = 'accelerator' UNION "
                               "SELECT accelerator_id FROM accelerator_alias")
    if stated.accelerator.lower() not in accelerators:
        shown = ", ".join(sorted(accelerators.values())[:12]) or "none (run perfledger refresh)"
        raise ImportRefused(f"unknown accelerator {stated.accelerator!r}; known ids: {shown}")
    models = _known(ctx, "SELECT model_family FROM mlperf_result UNION SELECT id FROM "
                         "model_shape UNION SELECT target_id FROM inferencex_alias")
    found = models.get(stated.model.strip().lower())
    return replace(stated, accelerator=accelerators[stated.accelerator.lower()],
                   model=found or stated.model.strip()), "mapped" if found else "unmapped"


def _rows(parsed: Parsed, raw: Raw, ids: dict, stated: Statement) -> list[dict]:
    common = {"import_id": ids["import"], "tool": parsed.tool,
              "tool_version": parsed.tool_version, "schema_version": parsed.schema_version,
              "file_name": ids["file"], "file_sha256": raw.sha256, "model": stated.model,
              "accelerator_id": stated.accelerator, "gpus": stated.count,
              "framework": stated.framework or UNSTATED,
              "precision": stated.precision or UNSTATED, "note": stated.note,
              "imported_at": raw.fetched_at, "evidence": Evidence.self_measured.value,
              "source_snapshot_id": ids["snapshot"]}
    rows = []
    for index, run in enumerate(parsed.runs):
        when = run.get("run_at")
        observed = when.date() if when else raw.fetched_at.date()
        note = run["definition_note"] + ("" if when else " The file records no run time: "
                                         "observed_on is the import date.")
        rows.append({**common, **run, "id": f"{ids['import']}:{index}", "run_index": index,
                     "observed_on": observed, "definition_note": note})
    return rows


def _store(ctx: LoadContext, raw: Raw, parsed: Parsed, stated: Statement,
           mapping: str) -> int:
    """Write one parsed file: raw bytes, source snapshot, runs and the import record."""
    import_id = raw.sha256[:16]
    snapshot = ctx.record(raw, kind="result_file", label=import_id,
                          parser_version=PARSER_VERSION)
    name = raw.url.removeprefix("file:")
    ids = {"import": import_id, "file": name, "snapshot": snapshot}
    ctx.con.execute("DELETE FROM self_import WHERE id = ?", [import_id])
    insert_rows(ctx.con, "self_import", [{
        "id": import_id, "file_name": name, "file_sha256": raw.sha256, "tool": parsed.tool,
        "tool_version": parsed.tool_version, "schema_version": parsed.schema_version,
        "runs": len(parsed.runs), "model": stated.model, "model_mapping": mapping,
        "accelerator_id": stated.accelerator, "gpus": stated.count,
        "framework": stated.framework or UNSTATED, "precision": stated.precision or UNSTATED,
        "note": stated.note, "imported_at": raw.fetched_at,
        "imported_by_run": ctx.stage.snapshot_id, "source_snapshot_id": snapshot}])
    return insert_rows(ctx.con, "self_observation", _rows(parsed, raw, ids, stated))


def _import_one(ctx: LoadContext, path: Path, stated: Statement,
                mapping: str) -> dict:
    """Import one file; its entry in the run's report (status, runs, import id, error)."""
    name = path.name
    try:
        body = path.read_bytes()
    except OSError as e:
        raise ResultFileError(f"cannot read the file: {e.strerror or e}", file=name) from None
    raw = Raw(source=SOURCE, url=f"file:{name}", body=body, fetched_at=datetime.now(UTC))
    entry = {"file": name, "import_id": raw.sha256[:16], "sha256": raw.sha256}
    before = fetch_dicts(ctx.reader, "SELECT i.*, s.parser_version FROM self_import i LEFT "
                         "JOIN source_snapshot s ON s.id = i.source_snapshot_id WHERE i.id = ? "
                         "AND i.removed_at IS NULL", [entry["import_id"]])
    if before and not stated.same_as(before[0]):
        b = before[0]
        raise ResultFileError(f"already imported as {b['id']} with {b['gpus']} x "
                              f"{b['accelerator_id']} and model {b['model']}; remove it first "
                              f"(perfledger import --remove {b['id']})", file=name)
    if before and before[0]["accelerator_id"] == stated.accelerator \
            and before[0]["parser_version"] == PARSER_VERSION:
        return {**entry, "status": ImportOutcome.unchanged, "runs": before[0]["runs"],
                "tool": before[0]["tool"]}
    parsed = detect.read(name, body)
    _check_gpus(parsed, stated, name, before[0]["id"] if before else None)
    ctx.changing()
    if before:  # stored by an older parser, or with the accelerator as typed: again
        ctx.con.execute("DELETE FROM self_observation WHERE import_id = ?", [entry["import_id"]])
    runs = _store(ctx, raw, parsed, stated, mapping)
    return {**entry, "status": ImportOutcome.imported, "runs": runs, "tool": parsed.tool,
            "tool_version": parsed.tool_version, "schema_version": parsed.schema_version}


def _check_gpus(parsed: Parsed, stated: Statement, name: str, stored: str | None) -> None:
    """Refuse a file whose server states the GPUs it used (SGLang's ``server_info``) when
    ``--count`` is not that or a whole number of such servers (replicas behind a router):
    every per-GPU figure and cost would be divided by the wrong count. ``stored``: the id of
    an earlier import of the same bytes with this count (parsed before this check), named
    with how to remove it."""
    for index, gpus, how in parsed.gpus:
        if stated.count % gpus:
            raise ResultFileError(
                f"the server's arguments in the file (server_info) say it used {gpus} GPUs "
                f"({how}), and --count {stated.count} is not {gpus} nor a whole number of "
                f"such servers behind a router: state --count {gpus} for one server" + (
                    f" (its import {stored} with --count {stated.count} stays until removed: "
                    f"perfledger import --remove {stored})" if stored else ""),
                file=name, run=index, field="server_info")


def load_files(ctx: LoadContext, *, paths: list[Path], stated: Statement) -> None:
    """Import every file: good files are stored, bad ones reported; never one half-stored."""
    stated, mapping = check_statement(ctx, stated)
    files, written = [], 0
    for path in paths:
        try:
            entry = _import_one(ctx, path, stated, mapping)
        except ResultFileError as e:
            entry = {"file": path.name, "status": ImportOutcome.refused, "error": str(e)}
            ctx.outcome.stale[path.name] = str(e)
            ctx.outcome.unloaded.add(path.name)
        files.append(entry)
        written += entry["runs"] if entry["status"] == ImportOutcome.imported else 0
    ctx.outcome.details["files"] = files
    ctx.outcome.details["model_mapping"] = mapping
    ctx.outcome.finish(written)


def remove(ctx: LoadContext, *, import_id: str) -> None:
    """Remove one import: its runs are deleted, its record marked removed (by this run)."""
    rows = fetch_dicts(ctx.reader, "SELECT * FROM self_import WHERE id = ?", [import_id])
    if not rows:
        raise ImportRefused(f"no import {import_id!r}; perfledger import --list shows them")
    if rows[0]["removed_at"] is not None:
        raise ImportRefused(f"import {import_id} was already removed at {rows[0]['removed_at']}")
    ctx.changing()
    gone = ctx.con.execute("DELETE FROM self_observation WHERE import_id = ? RETURNING id",
                           [import_id]).fetchall()
    ctx.con.execute("UPDATE self_import SET removed_at = ?, removed_by_run = ? WHERE id = ?",
                    [datetime.now(UTC), ctx.stage.snapshot_id, import_id])
    ctx.outcome.details["removed"] = {"import_id": import_id, "file": rows[0]["file_name"],
                                      "runs": len(gone)}
    ctx.outcome.wrote = True
    ctx.outcome.finish(0)


def as_json(value: object) -> str:
    """A report value as one JSON line (for the CLI's --json)."""
    return json.dumps(value, default=str, sort_keys=True)
