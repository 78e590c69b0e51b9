"""Provenance and operations: sources, refreshes, validation, health, meta."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response

from api.routes.common import PageDep, listed, reader, render_item, render_list, snapshot
from warehouse import queries
from warehouse.evidence import DESCRIPTIONS
from warehouse.health import source_status
from warehouse.queries import ListQuery
from warehouse.store import Layout

router = APIRouter(tags=["provenance"])


def _layout(request: Request) -> Layout:
    return Layout(request.app.state.settings.data_path)


@router.get("/v1/sources", summary="Source snapshots: every fetched body, with its sha256")
def list_sources(request: Request, p: PageDep,
                 source: Annotated[list[str] | None, Query(description="Source name: mlperf, "
                                   "mlperf_rules, azure_prices, curated.")] = None) -> Response:
    """Every source snapshot (raw bytes kept under their sha256)."""
    return render_list(request, ListQuery(relation="source_snapshot",
                                          equals={"source": listed(source)}), p)


@router.get("/v1/sources/{snapshot_id}", summary="One source snapshot and the rows parsed from it",
            responses={404: {"description": "Unknown source snapshot id."}})
def get_source(request: Request, snapshot_id: Annotated[str, Path(
        description="source_snapshot id, as in a row's source_snapshot_id.")]) -> Response:
    """Where the bytes came from, when, their sha256, and how many rows each table took."""
    with snapshot(request) as (opened, con):
        row = queries.source_snapshot(con, snapshot_id)
    if row is None:
        raise HTTPException(404, f"no source snapshot {snapshot_id!r} in snapshot {opened.id}")
    return render_item(request, opened, {"row": row})


@router.get("/v1/refreshes", summary="Refresh history, newest first (published or not)")
def list_refreshes(request: Request,
                   limit: Annotated[int, Query(ge=1, le=1000, description="Runs to return.")] = 50,
                   status: Annotated[list[str] | None, Query(description="published, unchanged, "
                                     "partial, failed or rejected.")] = None) -> Response:
    """Every refresh run with its per-source outcome and message."""
    runs = _layout(request).read_runs()
    wanted = listed(status)
    if wanted:
        runs = [r for r in runs if r["status"] in wanted]
    opened = reader(request).get()
    for r in runs:
        r.pop("validation", None)
        r["links"] = {"validation": f"/v1/refreshes/{r['id']}/validation"}
    return render_item(request, opened, {"total": len(runs), "rows": runs[:limit]})


@router.get("/v1/refreshes/{run_id}/validation", summary="Validation results of one refresh",
            responses={404: {"description": "Unknown refresh id."}})
def refresh_validation(request: Request, run_id: Annotated[str, Path(
        description="Refresh id from /v1/refreshes.")]) -> Response:
    """Each expectation of the run: severity, success, offending row count and a sample."""
    opened = reader(request).get()
    run = next((r for r in _layout(request).read_runs() if r["id"] == run_id), None)
    if run is None:
        raise HTTPException(404, f"no refresh {run_id!r}")
    results = run.get("validation", [])
    return render_item(request, opened, {
        "run_id": run_id, "status": run["status"],
        "errors": sum(1 for v in results if not v["success"] and v["severity"] == "error"),
        "warnings": sum(1 for v in results if not v["success"] and v["severity"] == "warning"),
        "rows": results})


@router.get("/healthz", summary="Current snapshot, per-source freshness, validation summary")
def healthz(request: Request) -> Response:
    """Which snapshot is served, when it was published, which sources are stale and why."""
    with snapshot(request) as (opened, con):
        validation = queries.validation_results(con)
    runs = _layout(request).read_runs()
    return render_item(request, opened, {
        "status": "ok" if opened.id else "empty",
        "published_at": opened.published_at,
        "sources": list(source_status(runs).values()),
        "last_refresh": ({k: runs[0][k] for k in ("id", "status", "message", "started_at")}
                         if runs else None),
        "validation": {
            "errors": sum(1 for v in validation if not v["success"] and v["severity"] == "error"),
            "warnings": [v["expectation"] for v in validation
                         if not v["success"] and v["severity"] == "warning"]},
    })


@router.get("/v1/meta", summary="Values for dashboard drop-downs, in one call", tags=["meta"])
def meta(request: Request) -> Response:
    """Rounds, models, organizations, scenarios, accelerators, regions and evidence labels."""
    with snapshot(request) as (opened, con):
        payload = {
            "rounds": queries.distinct_values(con, "mlperf_result", "round"),
            "models": queries.distinct_values(con, "mlperf_result", "model_id"),
            "organizations": queries.distinct_values(con, "mlperf_result", "organization"),
            "scenarios": queries.distinct_values(con, "mlperf_result", "scenario"),
            "accelerators": queries.distinct_values(con, "mlperf_result", "accelerator_id"),
            "regions": queries.distinct_values(con, "azure_price", "arm_region_name"),
            "evidence": [{"label": k.value, "meaning": v} for k, v in DESCRIPTIONS.items()],
        }
    return render_item(request, opened, payload)
