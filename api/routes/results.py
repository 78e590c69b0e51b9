"""MLPerf results: ``/v1/results`` and ``/v1/results/{id}``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response

from api.routes.common import (
    AsOfSnapshot,
    PageDep,
    listed,
    parse_as_of,
    render_item,
    render_list,
    result_filters,
    snapshot,
)
from warehouse import queries
from warehouse.public import ListPage, MlperfResultPublic, ResultItem

router = APIRouter(prefix="/v1", tags=["results"])


@router.get("/results", summary="MLPerf results, filtered and paginated",
            response_model=ListPage[MlperfResultPublic])
def list_results(
    request: Request,
    p: PageDep,
    round: Annotated[list[str] | None, Query(description="MLPerf round, e.g. v6.1.")] = None,
    division: Annotated[list[str] | None, Query(description="closed or open.")] = None,
    organization: Annotated[list[str] | None, Query(description="Submitter, e.g. NVIDIA.")] = None,
    model: Annotated[list[str] | None, Query(description="Model id (llama3_1-8b and llama3.1-8b "
                                             "are the same), e.g. deepseek-r1.")] = None,
    scenario: Annotated[list[str] | None, Query(description="Offline, Server, Interactive, "
                                                "SingleStream or MultiStream (any case).")] = None,
    accelerator: Annotated[list[str] | None, Query(description=(
        "Accelerator id (see /v1/accelerators), the name as published or a short name (H200); "
        "an ambiguous short name (H100) is a 422 listing the ids."))] = None,
    availability: Annotated[list[str] | None, Query(description="available, preview or rdi.")] = None,
    units: Annotated[list[str] | None, Query(description="Units, e.g. Tokens/s.")] = None,
    system: Annotated[str | None, Query(description="Substring of the system name "
                                        "(case-insensitive).")] = None,
    min_result: Annotated[float | None, Query(description="Smallest result.")] = None,
    max_result: Annotated[float | None, Query(description="Largest result.")] = None,
    as_of: AsOfSnapshot = None,
) -> Response:
    """Every MLPerf result row with its evidence label (`measured`) and source."""
    q = queries.results_query(
        result_filters(round, division, organization, model, accelerator, availability, scenario),
        units=listed(units), system=system, min_result=min_result, max_result=max_result)
    return render_list(request, q, p, parse_as_of(as_of))


@router.get("/results/{result_id}", summary="One MLPerf result with its full source record",
            response_model=ResultItem,
            responses={404: {"description": "No result with that id in the current snapshot."}})
def get_result(request: Request,
               result_id: Annotated[str, Path(description="Result id from /v1/results.")]) -> Response:
    """One result row, and the source snapshot (URL, fetched_at, sha256) it was parsed from."""
    with snapshot(request) as (opened, con):
        detail = queries.result_detail(con, result_id)
    if detail is None:
        raise HTTPException(404, f"no result {result_id!r} in snapshot {opened.id}")
    detail["links"] = {"source": f"/v1/sources/{detail['row']['source_snapshot_id']}"}
    return render_item(request, opened, detail)
