"""MLPerf results: ``/v1/results`` and ``/v1/results/{id}``."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import Field

from api.errors import NOT_FOUND
from api.params import AS_OF, NoQuery, ResultParams, as_of_param, bounded, listed
from api.responses import cache_headers
from api.routes.common import parse_as_of, render_item, render_list, settings_of, snapshot
from warehouse import queries
from warehouse.model.public import ListPage, MlperfResultPublic, ResultItem

router = APIRouter(prefix="/v1", tags=["results"])


class ResultsParams(ResultParams):
    units: list[str] | None = Field(None, description="Units, e.g. Tokens/s.")
    min_result: float | None = Field(None, description="Smallest result.", allow_inf_nan=False)
    max_result: float | None = Field(None, description="Largest result.", allow_inf_nan=False)
    as_of: str | None = as_of_param(AS_OF)


@router.get("/results", summary="MLPerf results, filtered and paginated",
            response_model=ListPage[MlperfResultPublic])
def list_results(request: Request, q: Annotated[ResultsParams, Query()]) -> Response:
    """Every MLPerf result row with its evidence label (`measured`) and source. Closed
    division, available systems unless ``division``/``availability`` say otherwise.
    Throughput results only, unless ``units`` asks for power rows (``units=Watts``)."""
    bounded("result", q.min_result, q.max_result)
    query = queries.results_query(q.filters(), units=listed(q.units), min_result=q.min_result,
                                  max_result=q.max_result)
    return render_list(request, query, q, parse_as_of(q.as_of))


@router.get("/results/{result_id}", summary="One MLPerf result with its full source record",
            response_model=ResultItem,
            responses={**NOT_FOUND, 307: {"description": "A newer parser gave the result "
                                          "another id (the same row of the same file): "
                                          "Location is its id now, relative to this URL."}})
def get_result(request: Request, result_id: Annotated[str, Path(description="Result id from "
                                                            "/v1/results.")],
               _: NoQuery) -> Response:
    """One result row, the source snapshot (URL, fetched_at, sha256) it was parsed from, and
    its earlier versions where a re-published round revised it; a withdrawn result answers
    with ``row`` null, ``withdrawn`` true and its last version; an id a newer parser renamed
    redirects (307) to the id the result has now, whose history lists the old one."""
    with snapshot(request) as (opened, con):
        detail = queries.result_detail(con, result_id)
    if detail is None:
        raise HTTPException(404, f"no result {result_id!r} in snapshot {opened.id}")
    if "renamed_to" in detail:  # a newer parser gave the same row another id: relative (a
        # path prefix kept), temporary and cached as the snapshot's answers are (a later
        # snapshot may say otherwise)
        return RedirectResponse(quote(detail["renamed_to"], safe=""), 307, headers=cache_headers(
            request, opened, settings_of(request).api_cache_max_age))
    latest = detail["row"] or detail["history"][-1]
    detail["links"] = {"source": f"/v1/sources/{latest['source_snapshot_id']}"}
    return render_item(request, opened, detail)
