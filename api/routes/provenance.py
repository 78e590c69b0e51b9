"""Provenance and operations: sources, refreshes, validation, health, meta."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response
from pydantic import Field

from api.errors import NOT_FOUND
from api.params import NoQuery, PageParams, Params, choice, listed, vocab
from api.routes.common import reader, render_item, render_list, snapshot
from warehouse import queries
from warehouse.exceptions import PerfledgerError, SnapshotError
from warehouse.model.public import (
    Health,
    ListPage,
    Meta,
    Ready,
    Refreshes,
    RefreshValidation,
    SourceItem,
    SourceSnapshotPublic,
)
from warehouse.quality import health
from warehouse.storage.store import Layout

router = APIRouter(tags=["provenance"])


def _runs(request: Request) -> list[dict]:
    return Layout(request.app.state.settings.data_path).read_runs()


class SourceParams(PageParams):
    source: list[str] | None = Field(None, description="Source name: mlperf, mlperf_rules, "
                                     "azure_prices, cloud_prices, curated, inferencex, "
                                     "selfmeasured (`perfledger import`).")


@router.get("/v1/sources", summary="Source snapshots: every fetched body, with its sha256",
            response_model=ListPage[SourceSnapshotPublic])
def list_sources(request: Request, q: Annotated[SourceParams, Query()]) -> Response:
    """Every source snapshot (raw bytes kept under their sha256)."""
    return render_list(request, queries.sources_query(source=listed(q.source)), q)


@router.get("/v1/sources/{snapshot_id}", summary="One source snapshot and the rows parsed from it",
            response_model=SourceItem,
            responses=NOT_FOUND)
def get_source(request: Request, snapshot_id: Annotated[str, Path(
        description="source_snapshot id, as in a row's source_snapshot_id.")],
               _: NoQuery) -> Response:
    """Where the bytes came from, when, their sha256, and how many rows each table took."""
    with snapshot(request) as (opened, con):
        row = queries.source_snapshot(con, snapshot_id)
    if row is None:
        raise HTTPException(404, f"no source snapshot {snapshot_id!r} in snapshot {opened.id}")
    return render_item(request, opened, {"row": row})


class RefreshParams(Params):
    limit: int = Field(50, ge=1, le=1000, description="Runs to return.")
    status: list[str] | None = vocab("status", "published, unchanged, partial, failed, "
                                     "rejected, running or interrupted.")


@router.get("/v1/refreshes", summary="Refresh history, newest first (published or not)",
            response_model=Refreshes)
def list_refreshes(request: Request, q: Annotated[RefreshParams, Query()]) -> Response:
    """Every refresh run with its per-source outcome and message."""
    payload = health.refreshes(_runs(request), choice("status", q.status), q.limit)
    for row in payload["rows"]:
        row["links"] = {"validation": f"/v1/refreshes/{row['id']}/validation"}
    return render_item(request, reader(request).get(), payload, journal=True)


@router.get("/v1/refreshes/{run_id}/validation", summary="Validation results of one refresh",
            response_model=RefreshValidation,
            responses=NOT_FOUND)
def refresh_validation(request: Request, run_id: Annotated[str, Path(
        description="Refresh id from /v1/refreshes.")], _: NoQuery) -> Response:
    """Each expectation of the run: severity, success, offending row count and a sample."""
    payload = health.refresh_validation(_runs(request), run_id)
    if payload is None:
        raise HTTPException(404, f"no refresh {run_id!r}")
    return render_item(request, reader(request).get(), payload, journal=True)


@router.get("/healthz", summary="Current snapshot, per-source freshness, validation summary",
            response_model=Health)
def healthz(request: Request, _: NoQuery) -> Response:
    """Which snapshot is served, when it was published, which sources are stale and why,
    and how its accelerator names map per round. Always 200 while the process is up: a
    current snapshot that cannot be read is named here (status degraded, or unavailable when
    nothing readable is left)."""
    try:
        with snapshot(request) as (opened, con):
            validation = queries.validation_results(con)
            coverage = queries.coverage(con)
    except SnapshotError as e:
        payload = health.health(None, None, [], _runs(request), corrupt=reader(request).corrupt)
        payload.update(status="unavailable", snapshot_id=None, reason=e.message)
        return JSONResponse(jsonable_encoder(payload), headers={"Cache-Control": "no-store"})
    payload = health.health(opened.id, opened.published_at, validation, _runs(request),
                            coverage, corrupt=reader(request).corrupt)
    response = render_item(request, opened, payload, journal=True)
    response.headers["Cache-Control"] = "no-store"  # freshness: never from a shared cache
    return response


@router.get("/readyz", summary="Readiness: 200 while a published snapshot can be served, else 503",
            response_model=Ready, responses={503: {"model": Ready,
                                                   "description": "Nothing can be served yet."}})
def readyz(request: Request, _: NoQuery) -> Response:
    """For a readiness probe: 503 only when no published snapshot can be served (before the
    first publish, or when the current one cannot be opened). Use /healthz for liveness and for
    freshness: it answers 200 whenever the process is up, with status ok, degraded or empty."""
    try:
        opened = reader(request).get()
    except PerfledgerError as e:
        return JSONResponse({"ready": False, "snapshot_id": None, "reason": str(e)}, 503,
                            headers={"Cache-Control": "no-store"})
    if not opened.id:
        return JSONResponse({"ready": False, "snapshot_id": None,
                             "reason": "no snapshot published yet"}, 503,
                            headers={"Cache-Control": "no-store"})
    return JSONResponse({"ready": True, "snapshot_id": opened.id, "reason": None},
                        headers={"Cache-Control": "no-store"})


@router.get("/v1/meta", summary="Values for dashboard drop-downs, in one call", tags=["meta"],
            response_model=Meta)
def meta(request: Request, _: NoQuery) -> Response:
    """Rounds, models, organizations, scenarios, accelerators, regions and evidence labels."""
    with snapshot(request) as (opened, con):
        payload = queries.meta(con)
    return render_item(request, opened, payload, memo=True)
