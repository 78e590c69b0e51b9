"""One refresh: lock → load each source → derive → validate → publish.

The first source that writes stages a copy of the current snapshot (``Staging``); a run in
which no source changes never copies it. A source that fails is rolled back inside the staging
file, so its last good rows are carried into the new snapshot and the run says it is stale.
Nothing is published when no source changed, or when validation reports an error. The current
snapshot is never written to.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import httpx

from ingest.config import SourcesConfig, load_sources
from ingest.context import LoadContext, SourceConfig, SourceOutcome, SourceSpec
from ingest.http import FetchLimits, RetryPolicy, make_client
from ingest.registry import SOURCES
from ingest.selfmeasured import suite as selfmeasured_suite
from warehouse.exceptions import (
    ConfigError,
    PerfledgerError,
    SnapshotError,
    disk_full,
    io_reason,
)
from warehouse.figures import derived
from warehouse.model.vocabulary import (
    FAILED_LINE,
    FAILED_MESSAGE,
    FELL_SHORT,
    PARTLY_FAILED,
    RUN_OK,
    RunStatus,
    SourceStatus,
)
from warehouse.quality import health, validation
from warehouse.quality.suites import Rule, core_rules
from warehouse.redact import redact_deep, redact_text
from warehouse.settings import Settings
from warehouse.storage.db import insert_rows, loaded_sources
from warehouse.storage.staging import Staging
from warehouse.storage.store import Layout, RefreshLock

log = logging.getLogger("perfledger.refresh")


def all_rules() -> list[Rule]:
    """Every validation rule: the core suites (provenance, derived) and each source's own."""
    rules = core_rules()
    for spec in SOURCES:
        rules.extend(spec.rules())
    rules.extend(selfmeasured_suite.rules())  # imported runs are carried by every snapshot
    return rules


@dataclass
class RunReport:
    """The outcome of one refresh, as recorded in runs/ and the refresh_run table."""

    id: str
    started_at: datetime
    status: RunStatus = RunStatus.running
    snapshot_id: str | None = None
    finished_at: datetime | None = None
    message: str = ""
    sources: list[SourceOutcome] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)
    validation: list[dict] = field(default_factory=list)
    coverage: dict = field(default_factory=dict)
    pid: int = field(default_factory=os.getpid)
    last_stage: str = "start"
    notes: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)  # switched off: said, never refreshed
    clock_behind_seconds: int = 0  # the system clock behind the store's newest time

    @property
    def exit_code(self) -> int:
        """0 when published or unchanged; 1 when any source failed or validation rejected."""
        return 0 if self.status in RUN_OK else 1

    def as_dict(self) -> dict:
        """JSON-ready form, every URL in it redacted (it goes to files, tables and the API)."""
        return redact_deep({  # type: ignore[return-value]
            "id": self.id, "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "status": self.status, "snapshot_id": self.snapshot_id, "message": self.message,
            "pid": self.pid, "last_stage": self.last_stage, "notes": self.notes,
            "sources": [s.as_dict() for s in self.sources], "disabled": self.disabled,
            "stages": self.stages, "clock_behind_seconds": self.clock_behind_seconds,
            "validation": self.validation, "coverage": self.coverage,
        })

    def partly(self) -> list[str]:
        """The sources some of whose parts (rounds, models) loaded and some failed."""
        return [s.source for s in self.sources if s.status == SourceStatus.partial]

    def summary_lines(self) -> list[str]:
        """One short line per source and one for the run: what a terminal or a scheduler's
        log should show (URLs cut to their host; the run record keeps every word)."""
        lines = [f"{s.source}: {_state(s)}"
                 + (f", {s.rows} rows" if s.rows else "")
                 + (f" — {_short(redact_text(_own(s)))}" if s.message else "")
                 for s in self.sources]
        lines += [f"{name}: disabled" for name in self.disabled]
        lines += [f"{s.source if part == s.source else f'{s.source} {part}'}: the body "
                  f"starts {text!r}"
                  for s in self.sources for part, text in s.excerpts.items()]
        rounds = self.coverage.get("accelerators_by_round", {})
        if rounds:  # one line: how the accelerator names of each round map to ids
            lines.append("accelerator names mapped: " + ", ".join(
                f"{r} {c['rows_mapped']}/{c['rows_with_accelerator']}" + _besides(c)
                for r, c in rounds.items()))
        clouds = self.coverage.get("cloud_accelerators_by_cloud", {})
        if clouds:  # one line: how each cloud's GPU rows map to accelerator ids
            lines.append("cloud GPU rows mapped: " + ", ".join(
                f"{c} {v['rows_mapped']}/{v['rows_with_accelerator']}" for c, v in clouds.items()))
        azure = self.coverage.get("cloud_azure_crosscheck")
        if azure:  # the catalog's Azure prices against the Azure API's own
            lines.append(f"catalog vs Azure API: {azure['compared']} prices compared, "
                         f"{len(azure['disagreements'])} disagree")
        lines += [f"note: {n}" for n in self.notes]
        if any(s.source == "mlperf" and not (s.error or {}).get("run_stopped")
               and (s.status in FELL_SHORT or "mirror" in s.message) for s in self.sources):
            lines.append(f"note: MLPerf could not be reached; {MIRROR_POINTER}")
        failed = [s.source for s in self.sources if s.status in FELL_SHORT]
        partly = self.partly()
        none = [s for s in failed if s not in partly]
        said = ("; ".join([f"{', '.join(none)} did not load"] * bool(none)  # lines above say why
                          + [f"{', '.join(partly)} loaded in part"] * bool(partly)) + " (above)"
                if failed and self.message.startswith(tuple(failed)) else one_line(self.message))
        lines.append(f"refresh {self.id}: {self.status}"
                     + (f", snapshot {self.snapshot_id}" if self.snapshot_id else "")
                     + (f" — {_short(redact_text(said))}" if said else ""))
        return [redact_text(line) for line in lines]


MIRROR_POINTER = ("the README's section 'Air-gapped: the built-in mirror' says which rounds "
                  "perfledger carries and how to point sources at a mirror or local files")


def _besides(c: dict) -> str:
    """A round's unmapped, ambiguous and mixed (several accelerators) row counts, if any."""
    said = [f"{c[k]} {k.removeprefix('rows_')}" for k in ("rows_unmapped", "rows_ambiguous",
                                                           "rows_mixed") if c.get(k)]
    return f" ({', '.join(said)})" if said else ""


def _state(s: SourceOutcome) -> str:
    """A source's status, and for a failed one whether last good data is served."""
    if s.status == SourceStatus.failed:
        return FAILED_LINE[s.had_rows]
    return s.status


def _fell_short(s: SourceOutcome) -> str:
    """How the run's message says a source that did not (wholly) load."""
    return FAILED_MESSAGE[s.had_rows] if s.status == SourceStatus.failed else PARTLY_FAILED


def _short(text: str, limit: int = 240) -> str:
    """``text`` with each URL cut to its scheme and host, at most ``limit`` characters."""
    text = re.sub(r"(https?://[^/\s]+)[^\s,;)]*", r"\1/…", text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def one_line(text: str) -> str:
    """A message on one line (a YAML or DuckDB error can span several)."""
    return " ".join(text.split())


def _check_disk(layout: Layout, min_free_mb: int) -> None:
    need = min_free_mb * 2**20
    current = layout.read_current()
    if current is not None and current.path.exists():
        need += 2 * current.path.stat().st_size
    free = shutil.disk_usage(layout.root).free
    if free < need:
        raise SnapshotError(f"not enough free disk in the data directory: {free // 2**20} MiB free, "
                            f"{need // 2**20} MiB needed for a new snapshot")


def refresh(
    settings: Settings,
    *,
    only: list[str] | None = None,
    accept_shrink: bool = False,
    accept_growth: bool = False,
    client: httpx.Client | None = None,
    on_event: Callable[[str, str], None] | None = None,
    specs: list[SourceSpec] | None = None,
) -> RunReport:
    """Run one refresh and return its report (also written to ``runs/``). ``specs`` runs
    these sources instead of the registry's (``perfledger import``: one unregistered source,
    its section's defaults as its configuration), through the same stage, validate, publish.

    Raises ``RefreshLocked`` if another refresh holds the lock, ``ConfigError`` for a bad
    sources file. Source failures and validation rejections are reported, not raised.
    """
    layout = _writable(Layout(settings.data_path))
    sources, selected = _selected(settings, only, specs)
    sink = on_event or (lambda kind, text: log.info("%s %s", kind, text))
    report: RunReport | None = None

    def emit(kind: str, text: str) -> None:
        if report is not None and kind != "progress":
            report.last_stage = kind if kind != "source" else f"source {text.split(':')[0]}"
            layout.write_run(report.as_dict())  # a kill leaves the last stage on record
            # (a full disk here raises, and the run fails naming it, below)
        sink(kind, redact_text(one_line(text)))

    own_client = client is None
    client = client or make_client(settings.http_timeout)
    policy = RetryPolicy(settings.http_retries, settings.http_backoff, settings.http_max_wait)

    with RefreshLock(layout):
        report = RunReport(id=layout.next_id(), started_at=datetime.now(UTC),  # switched off: said,
                           disabled=[s.name for s in SOURCES          # never failed or stale
                                     if not sources[s.name].enabled and specs is None])
        deadline = time.monotonic() + settings.refresh_deadline
        if not _begin(layout, report, emit):
            return _finish(layout, report)
        run = _Run(settings, layout, sources, report,
                   Staging(layout, report.id, settings.refresh_memory_mb,
                           on_open=lambda: emit("stage", f"staging snapshot {report.id}")),
                   client, policy, emit, accept_shrink, accept_growth, deadline)
        try:
            return _guarded(run, selected)
        finally:
            if own_client:
                client.close()


def _writable(layout: Layout) -> Layout:
    """``layout``, its directories made; a read-only or unwritable data directory, where
    nothing can be recorded, is a SnapshotError."""
    try:
        layout.ensure()
    except OSError as e:
        raise SnapshotError("the data directory cannot be written, so no refresh can run or "
                            f"be recorded: {io_reason(e, layout.root)}") from e
    return layout


def _guarded(run: _Run, selected: list[SourceSpec]) -> RunReport:
    """``run`` over ``selected``: a full disk, a vanished directory or DuckDB out of memory
    fails the run, named; anything else fails it and is raised; the staged file is discarded
    either way."""
    layout, report = run.layout, run.report
    try:
        return run.run(selected)
    except (OSError, duckdb.IOException, duckdb.OutOfMemoryException) as e:
        run.stage.discard()
        report.status = RunStatus.failed
        report.message = _reason(e, run)
        return _finish(layout, report)
    except BaseException as e:
        run.stage.discard()
        if report.status == RunStatus.running:
            report.status = RunStatus.failed
            report.message = io_reason(e, layout.root) if disk_full(e) else f"{type(e).__name__}: {e}"
            _finish(layout, report)
        raise


def _reason(e: BaseException, run: _Run) -> str:
    """What stopped the run: the I/O failure (``io_reason``), or DuckDB out of memory with the
    last stage the run began and the setting that bounds it."""
    if not isinstance(e, duckdb.OutOfMemoryException):
        return io_reason(e, run.layout.root)
    said = " ".join(str(e).split()).split(" Possible solutions")[0]  # not its SET advice
    return (f"out of memory (last stage: {run.report.last_stage}): a refresh's DuckDB may use "
            f"{run.settings.refresh_memory_mb} MB (PERFLEDGER_REFRESH_MEMORY_MB; raise it): "
            + said)


def _selected(settings: Settings, only: list[str] | None,
              specs: list[SourceSpec] | None = None) -> tuple[SourcesConfig, list[SourceSpec]]:
    """The sources file, and the sources this run refreshes: ``specs`` when given (an import
    of the user's own files), else the enabled ones (``only`` of them)."""
    if "sources" in settings.model_fields_set and not settings.sources.exists():
        raise ConfigError(f"the sources file {settings.sources} (PERFLEDGER_SOURCES) does not "
                          "exist; fix the path or unset it to use the defaults")
    sources = load_sources(settings.sources)
    selected = specs if specs is not None else [
        spec for spec in SOURCES if sources[spec.name].enabled and (not only or spec.name in only)]
    unknown = set(only or []) - set(sources.names)
    if unknown:
        raise ConfigError(f"unknown source(s): {', '.join(sorted(unknown))}; "
                          f"known: {', '.join(sources.names)}")
    return sources, selected


def _begin(layout: Layout, report: RunReport, emit: Callable[[str, str], None]) -> bool:
    """Clean up after interrupted runs and put this run on record; False (the report says
    why) when its record cannot be written."""
    for note in _close_interrupted(layout):
        report.notes.append(note)
        emit("cleanup", note)
    try:
        layout.write_run(report.as_dict())  # a kill from here on leaves a visible record
    except OSError as e:  # a full disk: say so and stop, before fetching anything
        report.status = RunStatus.failed
        report.message = io_reason(e, layout.root)
        return False
    return True


def _clean_up(layout: Layout, report: RunReport, emit: Callable[[str, str], None]) -> None:
    """Remove what a killed refresh left and, when the published snapshot cannot be read,
    quarantine it and point CURRENT at the last good one (each said in the run's notes)."""
    for p in layout.clean_partials():
        emit("cleanup", f"removed partial file {p.name} left by an interrupted refresh")
    recovered = layout.recover_current()
    if recovered:  # the published snapshot cannot be read: build on the last good one
        note = (f"corrupt snapshot {recovered['corrupt_snapshot']} "
                f"({recovered['reason']}) moved to {recovered['quarantined_to']}; "
                "rebuilding from " + (f"snapshot {recovered['rebuilt_from']}"
                                      if recovered["rebuilt_from"] else "the sources"))
        report.notes.append(note)
        emit("cleanup", note)


def _check_clock(layout: Layout, report: RunReport, emit: Callable[[str, str], None]) -> None:
    """Say so (run record, notes, /healthz) when the system clock is behind the newest time
    the store recorded: ids and publish times then continue from the store's, not the clock's."""
    behind = layout.clock_behind()
    if behind > 2:  # (a publish within the second it started may stand 1 s ahead)
        report.clock_behind_seconds = round(behind)
        note = (f"the system clock is {round(behind)} s behind the newest snapshot or run; "
                "ids and publish times continue from the store's, fix the clock")
        report.notes.append(note)
        emit("cleanup", note)


@dataclass
class _Run:
    """One refresh under its lock, by phase: load each source, derive, validate, publish."""

    settings: Settings
    layout: Layout
    sources: SourcesConfig
    report: RunReport
    stage: Staging
    client: httpx.Client
    policy: RetryPolicy
    emit: Callable[[str, str], None]
    accept_shrink: bool
    accept_growth: bool
    deadline: float
    floor: datetime | None = None  # the store's newest time, set when the run starts

    def run(self, selected: list[SourceSpec]) -> RunReport:
        report, stage = self.report, self.stage
        _clean_up(self.layout, report, self.emit)
        _check_clock(self.layout, report, self.emit)
        _check_disk(self.layout, self.settings.min_free_mb)
        # sources with rows to keep
        loaded = frozenset() if self.layout.read_current() is None \
            else loaded_sources(stage.reader())
        newest = self.layout.newest_known()  # a clock set back does not move "today" back
        self.floor = newest  # nor a version's or a fetch's time (LoadContext.now)
        today = max(datetime.now(UTC), newest or datetime.now(UTC)).date().isoformat()
        for spec in selected:
            self.load(spec, had_rows=spec.name in loaded, today=today)
        if stage.opened:
            report.stages["stage"] = stage.seconds
        failed = [o for o in report.sources if o.status in FELL_SHORT]
        changed = [o for o in report.sources if o.wrote]
        self.layout.sync_raw()
        if not changed:
            stage.discard()
            report.status = RunStatus.failed if failed else RunStatus.unchanged
            report.message = ("; ".join(f"{o.source}: {_own(o)}" for o in failed)
                              if failed else "no source changed; nothing published")
            return _finish(self.layout, report)
        staging = self.derive()
        if not self.validate(staging):
            return _finish(self.layout, report)
        self.publish(staging, failed)
        return _finish(self.layout, report)

    def load(self, spec: SourceSpec, had_rows: bool, today: str) -> None:
        """Load one source inside its own transaction: a failure rolls back its changes."""
        name, settings, stage = spec.name, self.settings, self.stage
        outcome = SourceOutcome(name, had_rows=had_rows)
        self.report.sources.append(outcome)
        self.emit("source", f"{name}: fetching")
        config = self.sources.sections.get(name) or spec.config()  # an import: defaults
        ctx = LoadContext(stage=stage, client=self.client, layout=self.layout,
                          config=config, base_dir=self.sources.base_dir,
                          policy=self.policy, outcome=outcome,
                          shrink_ratio=settings.shrink_ratio,
                          accept_shrink=self.accept_shrink, today=today,
                          growth_ratio=settings.growth_ratio,
                          accept_growth=self.accept_growth,
                          limits=_limits(settings, config),
                          changing=validation.prewarm, emit=self.emit, floor=self.floor,
                          request_seconds=settings.http_deadline,
                          deadline=min(self.deadline, time.monotonic()
                                       + settings.source_deadline))
        t = time.perf_counter()
        stage.begin()
        try:
            spec.load(ctx)
            if outcome.status == SourceStatus.pending:  # no change to report
                outcome.status = SourceStatus.unchanged
            outcome.wrote = outcome.wrote or outcome.status == SourceStatus.updated
            stage.commit()
        except PerfledgerError as e:
            _rollback(stage, e)
            outcome.fail(e)
        except duckdb.Error as e:  # rows the schema refuses: this source fails
            _rollback(stage, e)
            outcome.fail(e)
            if isinstance(e, duckdb.IOException | duckdb.OutOfMemoryException) or disk_full(e):
                outcome.message = "not loaded: the refresh stopped here (below)"
                outcome.error = {**(outcome.error or {}), "run_stopped": True}  # not the source's
                raise  # a full disk or memory fails the run (below), not just this source
        except BaseException as e:
            _rollback(stage, e)
            outcome.fail(e)
            raise
        finally:
            outcome.seconds = time.perf_counter() - t
        for part, text in outcome.excerpts.items():  # the log, not the run record
            log.warning("%s %s: the body starts %r", name, part, text)
        if outcome.wrote:
            validation.prewarm()  # GX's import overlaps the sources still loading
        self.emit("source", f"{name}: {outcome.status}"
                  + (f" — {outcome.message}" if outcome.message else ""))

    def derive(self) -> Path:
        """Normalise accelerators, install the derived views; the staged file, closed."""
        t = time.perf_counter()
        self.emit("derive", "normalising accelerators and installing derived views")
        con = self.stage.connection()
        for spec in SOURCES:
            if spec.finish is not None:
                self.report.coverage.update(spec.finish(con))
        from warehouse.model.schema import cluster  # imported once staging has written

        cluster(con)
        derived.install(con)
        con.execute("CHECKPOINT")
        staging = self.stage.close()
        assert staging is not None
        self.report.stages["derive"] = time.perf_counter() - t
        return staging

    def validate(self, staging: Path) -> bool:
        """Run every suite on the staged file; False (rejected, discarded) on an error."""
        report = self.report
        t = time.perf_counter()
        self.emit("validate", "running the validation suites")
        report.validation = validation.run_isolated(staging, layout=self.layout,
                                                    run_id=report.id, rules=all_rules())
        report.stages["validate"] = time.perf_counter() - t
        errors = [v for v in report.validation if not v["success"] and v["severity"] == "error"]
        if not errors:
            return True
        self.stage.discard()
        report.status = RunStatus.rejected
        report.message = "validation failed: " + "; ".join(
            f"{v['expectation']} ({v['unexpected_count']} row(s))"
            if v["unexpected_count"] is not None else f"{v['expectation']} ({v['sample']})"
            for v in errors)
        return False

    def publish(self, staging: Path, failed: list[SourceOutcome]) -> None:
        """Record the run in the staged file, publish it, prune old snapshots."""
        report, layout = self.report, self.layout
        t = time.perf_counter()
        report.status = RunStatus.partial if failed else RunStatus.published
        report.snapshot_id = report.id
        report.message = "; ".join(
            f"{o.source} {_fell_short(o)}: {_own(o)}" for o in failed)
        report.finished_at = layout.publish_time()  # after every recorded time
        con = duckdb.connect(str(staging))
        _record_run(con, layout, report)
        con.execute("CHECKPOINT")
        con.close()
        self.emit("publish", f"publishing snapshot {report.id}")
        layout.publish(staging, report.id, report.finished_at)
        self.stage.path = None  # published: no longer ours to delete
        for p in layout.prune(self.settings.retention_count, self.settings.retention_days):
            self.emit("prune", f"removed old snapshot {p.name}")
        report.stages["publish"] = time.perf_counter() - t


def _limits(settings: Settings, config: SourceConfig) -> FetchLimits:
    """A source's fetch limits: its sources.toml section over the settings."""
    mb = config.max_body_mb or settings.max_body_mb
    return FetchLimits(allowed_redirect_hosts=tuple(config.allowed_redirect_hosts),
                       max_bytes=int(mb * 2**20), max_inflation=settings.max_inflation)


def _own(outcome: SourceOutcome) -> str:
    """A source's message without its own name in front (the caller names the source once)."""
    return one_line(re.sub(rf"^{re.escape(outcome.source)}:?\s+", "", outcome.message))


def _rollback(stage: Staging, cause: BaseException) -> None:
    """Roll back a failed source; if that fails too (a commit that failed on a full disk
    leaves no transaction), log it and keep ``cause``, the error that says what happened."""
    try:
        stage.rollback()
    except duckdb.Error as e:
        log.warning("rollback after %s failed: %s", type(cause).__name__, one_line(str(e)))


def _close_interrupted(layout: Layout) -> list[str]:
    """Runs left ``running`` by a refresh that died (we hold the lock, so none is alive):
    each is marked ``interrupted`` with its pid, start and last stage; returns one note each."""
    notes = []
    for run in layout.read_runs():
        if run.get("status") != RunStatus.running:
            continue
        note = (f"the refresh {run['id']} (pid {run.get('pid')}, started {run['started_at']}, "
                f"last stage {run.get('last_stage')}) was interrupted")
        try:
            layout.write_run({**run, "status": RunStatus.interrupted, "message": note})
        except OSError as e:  # marked next time; this run's own record says why
            note += f" (its record could not be updated: {io_reason(e, layout.root)})"
        notes.append(note)
    return notes


def _record_run(con: duckdb.DuckDBPyConnection, layout: Layout, report: RunReport) -> None:
    """Write the run history (journal + this run) and this run's validation into the snapshot."""
    con.execute("DELETE FROM refresh_run")
    runs = [_run_row(r) for r in layout.read_runs()] + [_run_row(report.as_dict())]
    insert_rows(con, "refresh_run", {r["id"]: r for r in runs}.values())
    con.execute("DELETE FROM validation_result")
    insert_rows(con, "validation_result", [
        {**v, "id": f"{report.id}:{v['expectation']}", "run_id": report.id}
        for v in report.validation])


def _run_row(run: dict) -> dict:
    return {"id": run["id"], "started_at": run["started_at"], "finished_at": run["finished_at"],
            "status": run["status"], "snapshot_id": run["snapshot_id"],
            "outcome": json.dumps(health.outcomes(run)), "message": run["message"]}


def _finish(layout: Layout, report: RunReport) -> RunReport:
    report.finished_at = report.finished_at or datetime.now(UTC)
    try:
        layout.write_run(report.as_dict())
    except OSError as e:  # the outcome still reaches the caller, the CLI and the log
        note = f"the run record could not be written: {io_reason(e, layout.root)}"
        report.notes.append(note)
        log.error("refresh %s: %s", report.id, note)
    log.info("refresh %s finished: %s (pid %s)", report.id, report.status, os.getpid())
    return report
