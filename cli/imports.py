"""``perfledger import``: self-measured benchmark result files into the warehouse.

Each import (and each removal) is one refresh run of one source (``ingest.selfmeasured``):
staged, validated and published like any refresh, recorded in the run journal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from cli import EXIT_LOCKED, fail
from warehouse.exceptions import PerfledgerError
from warehouse.model.vocabulary import ImportOutcome, SourceStatus
from warehouse.settings import Settings
from warehouse.storage.store import Layout


def _list(settings: Settings, as_json: bool) -> None:
    import duckdb

    from warehouse.figures.selfmeasured import list_imports

    ref = Layout(settings.data_path).read_current()
    rows: list[dict] = []
    if ref is not None:
        con = duckdb.connect(str(ref.path), read_only=True)
        try:
            rows = list_imports(con)
        finally:
            con.close()
    if as_json:
        typer.echo(json.dumps(rows, default=str, indent=1))
        return
    if not rows:
        typer.echo("no imports")
    for r in rows:
        state = f"removed {r['removed_at']:%Y-%m-%d %H:%M}" if r["removed_at"] else "in warehouse"
        typer.echo(f"{r['id']}  {r['file_name']}  {r['tool']} {r['tool_version'] or ''}".rstrip()
                   + f"  {r['runs']} run(s)  {r['gpus']} x {r['accelerator_id']}  {r['model']}"
                   + f" ({r['model_mapping']})  imported {r['imported_at']:%Y-%m-%d %H:%M}"
                   + f"  {state}")


def _lines(report) -> list[str]:  # noqa: ANN001 - a RunReport
    """One line per file (or the removal), then the run's line."""
    lines = []
    for s in report.sources:
        for f in s.details.get("files", []):
            if f["status"] == ImportOutcome.refused:
                lines.append(f"refused: {f['error']}")
            else:
                lines.append(f"{f['status']}: {f['file']} ({f['tool']}, {f['runs']} run(s)), "
                             f"import {f['import_id']}")
        if s.details.get("model_mapping") == "unmapped":
            lines.append("note: the model is not a warehouse model id; kept as given (unmapped)")
        if "removed" in s.details:
            r = s.details["removed"]
            lines.append(f"removed: import {r['import_id']} ({r['file']}, {r['runs']} run(s))")
        if s.status == SourceStatus.failed:
            lines.append(f"failed: {s.message}")
    lines.append(report.summary_lines()[-1])
    return lines


def import_command(
    files: Annotated[list[Path] | None, typer.Argument(
        help="Result files: vLLM bench serve JSON/JSONL, SGLang bench_serving JSONL, AIPerf "
             "profile_export_aiperf.json, GuideLLM benchmarks.json, LLMPerf *_summary.json.")
    ] = None,
    accelerator: Annotated[str | None, typer.Option(
        help="Accelerator id the runs used (the files record none), e.g. nvidia-h100-sxm.")] = None,
    count: Annotated[int | None, typer.Option(
        help="How many accelerators the serving deployment occupied (every GPU).")] = None,
    model: Annotated[str | None, typer.Option(
        help="Model id (a warehouse model id, or any name: kept as given, reported unmapped).")
    ] = None,
    framework: Annotated[str | None, typer.Option(help="Serving framework, e.g. vllm.")] = None,
    precision: Annotated[str | None, typer.Option(help="Precision, e.g. fp8.")] = None,
    note: Annotated[str | None, typer.Option(help="A note kept with the runs.")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the imports (removed ones too).")
                     ] = False,
    remove: Annotated[str | None, typer.Option(
        help="Remove the import with this id (its runs go; the removal is recorded).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="--list as JSON.")] = False,
) -> None:
    """Import self-measured benchmark runs (evidence self_measured) with the hardware you
    state, list imports, or remove one. Idempotent by content: the same file again changes
    nothing. A bad file is refused naming file, run and field; the other files still import
    (exit 1 when any file was refused)."""
    from ingest.refresh import refresh
    from ingest.selfmeasured.load import Statement, import_spec, remove_spec

    settings = Settings()
    if list_:
        _list(settings, as_json)
        return
    try:
        if remove:
            report = refresh(settings, specs=[remove_spec(remove)])
        else:
            missing = [o for o, v in (("--accelerator", accelerator), ("--count", count),
                                      ("--model", model), ("FILE", files)) if not v]
            if missing:
                raise PerfledgerError(f"perfledger import needs {', '.join(missing)} "
                                      "(or --list, or --remove ID)")
            stated = Statement(accelerator or "", count or 0, model or "", framework,
                               precision, note)
            report = refresh(settings, specs=[import_spec(list(files or []), stated)])
    except PerfledgerError as e:
        fail(e, EXIT_LOCKED if e.retryable else 1)
    for line in _lines(report):
        typer.echo(line)
    raise typer.Exit(report.exit_code)
