"""The ``perfledger`` command. Errors become one ``Type: message`` line and exit code 1."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from cli import EXIT_LOCKED, fail
from ingest.registry import SOURCES
from warehouse.exceptions import PerfledgerError
from warehouse.model.vocabulary import FELL_SHORT, RunStatus, SourceStatus
from warehouse.redact import redact_text
from warehouse.settings import Settings
from warehouse.storage.store import Layout, SnapshotRef

app = typer.Typer(help="perfledger: a warehouse of LLM-inference evidence.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


def _settings() -> Settings:
    return Settings()


def _current(layout: Layout) -> SnapshotRef:
    """The current snapshot; with none published, the command ends saying so."""
    ref = layout.read_current()
    if ref is None:
        fail(PerfledgerError("no snapshot published yet; run `perfledger refresh` first"))
    return ref


def _log_line(level: str, event: str, message: str, **fields: object) -> None:
    """One JSON object on standard error (``--log-json``); every URL in it redacted."""
    from datetime import UTC, datetime

    line = {"time": datetime.now(UTC).isoformat(), "level": level, "event": event,
            "source": None, "status": None, "rows": None, "seconds": None, **fields,
            "message": redact_text(message)}
    print(json.dumps(line, default=str), file=sys.stderr, flush=True)


@app.command()
def refresh(
    source: Annotated[list[str] | None, typer.Option(
        "--source", help="Refresh only this source (repeatable): "
        + ", ".join(f"{s.name} ({s.doc})" for s in SOURCES) + ".")] = None,
    accept_shrink: Annotated[bool, typer.Option(
        help="Accept a source that returns far fewer rows than last time.")] = False,
    accept_growth: Annotated[bool, typer.Option(
        help="Accept a source that returns far more rows than last time (growth_ratio).")
    ] = False,
    report: Annotated[Path | None, typer.Option(help="Write the JSON run report here.")] = None,
    log_json: Annotated[bool, typer.Option(help="Log one JSON object per line (stderr).")] = False,
    wait: Annotated[float, typer.Option(help="Seconds to wait for a running refresh to finish "
                                        "before giving up (default: do not wait).")] = 0.0,
) -> None:
    """Pull every source, validate, publish a new snapshot (exit 0), or publish nothing and say
    why (exit 1; also when a source or a round failed and the rest was published). Exit 75
    when another refresh holds the lock (busy, not broken). Safe to run any time: locked,
    idempotent, kill-safe."""
    import time

    from warehouse.exceptions import RefreshLocked

    progress = None
    if not log_json and sys.stderr.isatty():
        from rich.console import Console
        from rich.status import Status

        progress = Status("refreshing", console=Console(stderr=True))
        progress.start()

    started = time.monotonic()
    try:
        result = _refresh_waiting(source, accept_shrink, accept_growth,
                                  _events(log_json, progress), started + wait)
    except RefreshLocked as e:
        if log_json:
            _log_line("error", "locked", str(e), status="busy")
            raise typer.Exit(EXIT_LOCKED) from None
        fail(e, EXIT_LOCKED)
    except PerfledgerError as e:
        if log_json:
            _log_line("error", "error", f"{type(e).__name__}: {e}", status=RunStatus.failed)
            raise typer.Exit(1) from None
        fail(e)
    finally:
        if progress is not None:
            progress.stop()
    if report:
        try:
            report.write_text(json.dumps(result.as_dict(), indent=2, default=str))
        except OSError as e:  # the run is recorded in runs/ all the same
            from warehouse.exceptions import ExportError, io_reason

            fail(ExportError(f"the report could not be written to {report} (the run is "
                             f"recorded in runs/{result.id}.json): {io_reason(e)}"))
    _say(result, log_json, time.monotonic() - started)
    raise typer.Exit(result.exit_code)


def _events(log_json: bool, progress):
    """The refresh's progress callback: JSON lines, or the terminal's status line."""

    def event(kind: str, text: str) -> None:
        if log_json:
            fields: dict[str, object] = {}
            if kind in ("source", "progress"):
                name, _, rest = text.partition(": ")
                fields = {"source": name, "status": rest.split(" — ")[0] if kind == "source"
                          else None}
            _log_line("info", kind, text, **fields)
        elif progress is not None:
            progress.update(f"{kind}: {text}")

    return event


def _refresh_waiting(source, accept_shrink: bool, accept_growth: bool, event,
                     deadline: float):
    """One refresh; while another holds the lock, try again each second until ``deadline``."""
    import time

    from ingest.refresh import refresh as run_refresh
    from warehouse.exceptions import RefreshLocked

    while True:
        try:
            return run_refresh(_settings(), only=source or None, accept_shrink=accept_shrink,
                               accept_growth=accept_growth, on_event=event)
        except RefreshLocked:
            if time.monotonic() >= deadline:
                raise
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


@app.command(name="backfill-prices")
def backfill_prices(
    cloud: Annotated[str, typer.Argument(help="A cloud of cloud_prices.clouds in the sources "
                                         "file (aws, gcp, vast...).")],
    since: Annotated[datetime, typer.Option(help="Window start (UTC), e.g. 2026-11-01.")],
    until: Annotated[datetime, typer.Option(help="Window end (UTC), e.g. 2026-12-01.")],
    max_commits: Annotated[int, typer.Option(help="Refuse a window with more commits than "
                                             "this (1-100).")] = 10,
) -> None:
    """Add a cloud's price history from the SkyPilot catalog's earlier commits in a window
    (GitHub's commits API lists them; each file is read at its commit and versioned with the
    commit's date), after the history already stored. One refresh run: locked, validated,
    published or nothing."""
    from ingest.cloud_prices.backfill import backfill_spec, utc
    from ingest.refresh import refresh as run_refresh

    try:
        result = run_refresh(Settings(), specs=[backfill_spec(cloud, utc(since), utc(until),
                                                              max_commits)])
    except PerfledgerError as e:
        fail(e, EXIT_LOCKED if e.retryable else 1)
    _say(result, False, 0.0)
    raise typer.Exit(result.exit_code)


def _say(result, log_json: bool, seconds: float) -> None:
    """The run's summary: a line per source and one for the run, as text or JSON lines."""
    if log_json:
        for s in result.sources:
            _log_line("warning" if s.status in FELL_SHORT else "info", "summary",
                      s.message or s.status, source=s.source, status=s.status, rows=s.rows,
                      seconds=round(s.seconds, 3))
        _log_line("info" if result.exit_code == 0 else "error", "summary",
                  result.summary_lines()[-1], status=result.status,
                  rows=sum(s.rows for s in result.sources), seconds=round(seconds, 3))
    else:
        for line in result.summary_lines():
            typer.echo(line)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address (default: api_host).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: api_port).")] = None,
    workers: Annotated[int | None, typer.Option(help="uvicorn workers (default: api_workers).")] = None,
    refresh_every: Annotated[str | None, typer.Option(
        help="Also refresh in the background every interval, e.g. 30m, 6h, 1d (single-process "
        "deployments; requests are never blocked).")] = None,
) -> None:
    """Serve the read-only API over the current snapshot."""
    import uvicorn

    s = _settings()
    if refresh_every:
        from ingest.scheduler import parse_interval, start_background_refresh

        try:
            start_background_refresh(s, parse_interval(refresh_every))
        except PerfledgerError as e:
            fail(e)
    from api.server import uvicorn_options

    # Workers are separate processes that build their own Settings from the environment; the
    # host and port given here are where links in answers point (unless a public URL is set).
    os.environ["PERFLEDGER_DATA_DIR"] = str(s.data_path)
    os.environ["PERFLEDGER_SOURCES"] = str(s.sources.resolve())
    os.environ["PERFLEDGER_API_HOST"] = host = host or s.api_host
    os.environ["PERFLEDGER_API_PORT"] = str(port := port or s.api_port)
    options = uvicorn_options(s)
    options["workers"] = workers or s.api_workers
    # the program's objects are frozen once the app is built (``create_served_app``), unless a
    # refresh runs in this process meanwhile: its objects would be frozen with them, never freed
    factory = "api.app:create_app" if refresh_every else "api.app:create_served_app"
    uvicorn.run(factory, factory=True, host=host, port=port, **options)


@app.command()
def run(
    host: Annotated[str | None, typer.Option(help="Address (default: api_host).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: api_port).")] = None,
) -> None:
    """What `make run` does: refresh (a failed source is reported and its last good data kept;
    the run goes on), serve the API and the explorer, and end with a short summary: where the
    explorer, the API docs and MCP are, which sources came from the network, which from the
    built-in mirror, and what needs the network."""
    import asyncio

    import uvicorn

    from api.server import uvicorn_options
    from ingest.refresh import refresh as run_refresh

    s = _settings()
    result = None
    try:
        result = run_refresh(s)
        for line in result.summary_lines():
            typer.echo(line)
    except PerfledgerError as e:  # locked or broken: the last good snapshot still serves
        typer.echo(f"refresh: {type(e).__name__}: {e}", err=True)
    host, port = host or s.api_host, port or s.api_port
    server = uvicorn.Server(uvicorn.Config("api.app:create_served_app", factory=True, host=host,
                                           port=port, **uvicorn_options(s)))

    async def serve_then_say() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.05)
        if server.started:
            typer.echo("\n".join(_run_summary(result, f"http://{host}:{port}")))
        await task

    # as `serve` does: the app builds its Settings from the environment
    os.environ["PERFLEDGER_DATA_DIR"] = str(s.data_path)
    os.environ["PERFLEDGER_SOURCES"] = str(s.sources.resolve())
    os.environ["PERFLEDGER_API_HOST"], os.environ["PERFLEDGER_API_PORT"] = host, str(port)
    asyncio.run(serve_then_say())


def _run_summary(result, base: str) -> list[str]:
    """The lines `perfledger run` ends with, once the server is up."""
    lines = [f"perfledger is up: the explorer at {base}/ , the API docs at {base}/docs , "
             f"MCP at {base}/mcp/ (stop with Ctrl-C)"]
    if result is None:
        return [*lines, "the refresh did not run (see above): serving the last good snapshot"]
    mirrored, network, missing = [], [], []
    for o in result.sources:
        parts = [k for k, d in o.details.items() if isinstance(d, dict) and "source" in d]
        if parts or "built-in mirror" in o.message:
            mirrored.append(f"{o.source} ({', '.join(parts)})" if parts else o.source)
        elif o.status in (SourceStatus.updated, SourceStatus.unchanged):
            network.append(o.source)
        if o.status in FELL_SHORT:
            missing.append(o.source + (f" ({', '.join(o.stale)})" if o.stale else ""))
    lines.append("from the network: " + (", ".join(network) or "nothing"))
    if mirrored:
        lines.append("from the built-in mirror (no network): " + "; ".join(mirrored))
    if missing:
        lines.append("needs the network: " + "; ".join(missing)
                     + " — run `perfledger refresh` again once it is reachable")
    lines.append("scheduled refreshes: `perfledger refresh` exits 0 when published or unchanged, "
                 "1 when a source failed or validation rejected, 75 when another refresh runs")
    return lines


@app.command()
def mcp() -> None:
    """Serve the MCP tools (results, per_accelerator, ratios, costs, frontier, claim_checks,
    accelerators) over stdio for an agent, read-only, over the current snapshot."""
    from api import mcp as mcp_server
    from api.app import create_app

    mcp_server.build(create_app(_settings())).run("stdio")


@app.command()
def sql(
    command: Annotated[str | None, typer.Option("-c", "--command",
                                                help="Run this SQL and print the result.")] = None,
) -> None:
    """Open the current snapshot read-only: a DuckDB shell, or run one statement with -c.
    Reading is all it can do: DuckDB's guards (``warehouse.storage.db.READ_ONLY_GUARDS``) refuse
    COPY ... TO, EXPORT DATABASE, ATTACH, INSTALL/LOAD and every SET or PRAGMA."""
    import duckdb

    from warehouse.storage.db import GUARD_SQL, open_read_only

    ref = _current(Layout(_settings().data_path))
    if command:
        con = open_read_only(ref.path)
        try:
            con.sql(command).show(max_rows=10_000, max_width=10_000)
        except duckdb.Error as e:
            fail(PerfledgerError(f"{e}"))
        finally:
            con.close()
        return
    shell = shutil.which("duckdb")
    if shell and sys.stdin.isatty():
        raise typer.Exit(subprocess.call([shell, "-readonly", "-safe", "-cmd", GUARD_SQL,
                                          str(ref.path)]))
    typer.echo(f"current snapshot: {ref.path}\n"
               f"open it with:  duckdb -readonly -safe {ref.path}\n"
               f"or in Python:  duckdb.connect('{ref.path}', read_only=True)")


@app.command()
def validate(
    snapshot: Annotated[Path | None, typer.Option(help="Snapshot file (default: current).")] = None,
) -> None:
    """Run the validation suites and print a table; exit 1 when any error rule fails."""
    from rich.console import Console
    from rich.table import Table

    from ingest.refresh import all_rules
    from warehouse.quality import health, validation

    s = _settings()
    layout = Layout(s.data_path)
    path = snapshot
    if path is None:
        path = _current(layout).path
    try:
        results = validation.run_isolated(path, layout=layout, rules=all_rules())
    except PerfledgerError as e:
        fail(e)
    table = Table("severity", "rule", "ok", "rows", title=f"validation of {path.name}")
    for r in results:
        table.add_row(r["severity"], r["expectation"],
                      "no rows" if health.no_rows(r) else "yes" if r["success"] else "NO",
                      "" if r["unexpected_count"] is None else str(r["unexpected_count"]))
    Console(width=160).print(table)
    errors = [r for r in results if not r["success"] and r["severity"] == "error"]
    raise typer.Exit(1 if errors else 0)


@app.command()
def export(
    out: Annotated[Path, typer.Option(help="Directory to write the files and manifest.json to.")],
    format: Annotated[str, typer.Option(help="parquet or csv.")] = "parquet",
    csv_raw: Annotated[bool, typer.Option(help="CSV: write text cells as they are (by default a "
                                          "cell starting with = + - @, tab or CR gets a leading "
                                          "apostrophe so a spreadsheet shows it as text).")] = False,
    force: Annotated[bool, typer.Option(help="Replace files of the same names already in "
                                        "--out (other files are left alone).")] = False,
) -> None:
    """Write every table and view of the current snapshot, one file each, with a manifest.
    Nothing is written unless everything is: a failure leaves no partial file behind."""
    from warehouse.storage.export import export as run_export

    ref = _current(Layout(_settings().data_path))
    try:
        manifest = run_export(ref, out, format, csv_escape=not csv_raw, force=force)
    except PerfledgerError as e:
        fail(e)
    typer.echo(f"exported {len(manifest['files'])} tables and views of snapshot "
               f"{manifest['snapshot_id']} to {out}")


@app.command()
def describe() -> None:
    """Print the data dictionary: every table and view with its columns and comments."""
    from warehouse.model.catalog import dictionary
    from warehouse.model.schema import empty_warehouse
    from warehouse.storage.db import open_read_only

    ref = Layout(_settings().data_path).read_current()
    with open_read_only(ref.path) if ref else empty_warehouse() as con:
        typer.echo(dictionary(con))


# Names the command took before it asked /v1/calc itself: still understood.
OLD_NAMES = {"hardware_id": "hardware", "model_id": "model", "best-gamma": "speculative"}


@app.command()
def calc(
    name: Annotated[str, typer.Argument(help="A /v1/calc calculator: decode-bound, batch, "
                                        "prefill, ridge, grid (warehouse inputs) or speculative, "
                                        "tensor-parallel, kv-transfer, capacity, "
                                        "bandwidth-needed (explicit numbers).")],
    args: Annotated[list[str] | None, typer.Argument(help="key=value inputs, named as in "
                                                     "/v1/calc (repeat a key for a list), e.g. "
                                                     "hardware=8x-nvidia-h100-sxm "
                                                     "model=illustrative-100b.")] = None,
) -> None:
    """The bound calculators: /v1/calc/NAME asked in process on the current snapshot, with
    the API's defaults and checks; prints its JSON."""
    import asyncio

    params: list[tuple[str, str]] = []
    for a in args or []:
        key, sep, value = a.partition("=")
        if not sep:
            fail(PerfledgerError(f"{a!r}: inputs are key=value"))
        key = key.replace("-", "_")
        params.append((OLD_NAMES.get(key, key), value))
    from fastapi.routing import APIRoute

    from api.routes.calc import router

    name = OLD_NAMES.get(name, name)
    known = sorted(r.path.removeprefix(router.prefix + "/") for r in router.routes
                   if isinstance(r, APIRoute))
    if name not in known:  # only a calculator's route is asked
        fail(PerfledgerError(f"unknown calculator {name!r}; known: {', '.join(known)}"))
    status, body = asyncio.run(_ask_api(_settings(), f"{router.prefix}/{name}", params))
    if status != 200:
        try:
            said = json.loads(body)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            said = f"HTTP {status}"
        fail(PerfledgerError(f"{name}: {said}"))
    try:  # JSON, indented; another format asked for (format=csv) as it came
        typer.echo(json.dumps(json.loads(body), indent=2))
    except ValueError:
        typer.echo(body, nl=False)


async def _ask_api(s: Settings, path: str, params: list[tuple[str, str]]) -> tuple[int, str]:
    """GET ``path`` from the API app in this process (no server): its status and body (an
    error inside the app is its 500 answer, as a server would give)."""
    import httpx

    from api.app import create_app

    api = create_app(s)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(
                app=api, raise_app_exceptions=False), base_url=s.public_url) as client:
            reply = await client.get(path, params=tuple(params))
    finally:
        api.state.reader.close()
    return reply.status_code, reply.text


from cli.imports import import_command  # noqa: E402 - its own module; registered here

app.command(name="import")(import_command)


def main() -> None:
    """Entry point of the ``perfledger`` script."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


if __name__ == "__main__":
    main()
