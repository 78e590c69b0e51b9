"""InferenceX observations and the throughput–interactivity frontier: ``/v1/observations``
and ``/v1/frontier``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import Field

from api.params import (
    AS_OF,
    CHOICES,
    PageParams,
    as_of_param,
    buyer_choice,
    check_choice,
    listed,
    one_price_place,
)
from api.routes.common import parse_as_of, render_list, snapshot
from warehouse import queries
from warehouse.exceptions import QueryError
from warehouse.model.public import (
    ClaimObservationPublic,
    FrontierPointPublic,
    ListPage,
    ObservationPublic,
)
from warehouse.model.vocabulary import AVAILABILITY, DIVISIONS, POWER_STATUSES
from warehouse.queries.builders import FrontierFilter, ObservationFilter, day

router = APIRouter(prefix="/v1", tags=["observations"])


class ObservationParams(ObservationFilter, PageParams):
    as_of: str | None = as_of_param(AS_OF)


@router.get("/observations", summary="InferenceX observations (third-party measured)",
            response_model=ListPage[ObservationPublic])
def observations(request: Request, q: Annotated[ObservationParams, Query()]) -> Response:
    """Every SemiAnalysis InferenceX observation: configuration, latency percentiles,
    interactivity, throughput per every GPU (the publisher's own figures beside, named for what
    they divide by), the GPU count and how it was counted, the publisher's invariants the row
    breaks, and power with its validity verdict; missing metrics are null. One version per row:
    the current one, or with ``as_of`` the one valid then (a revised upstream row keeps its
    earlier versions). Each row cites its run (``run_url``) and carries InferenceX's attribution. Newest
    first unless sorted."""
    f = q.model_copy(update={"power_status": check_choice("power_status", listed(q.power_status),
                                                          POWER_STATUSES)})
    f.dates()  # a bad date is said before a bad as_of, as it always was
    at = parse_as_of(q.as_of)
    return render_list(request, queries.observations_query(f, at), q, at)


class FrontierParams(FrontierFilter, PageParams):
    as_of: str | None = as_of_param(AS_OF)


@router.get("/frontier", summary="Throughput per GPU against tokens/s per user: the "
            "InferenceX frontier, MLPerf overlaid", response_model=ListPage[FrontierPointPublic])
def frontier(request: Request, q: Annotated[FrontierParams, Query()]) -> Response:
    """Per accelerator, the Pareto-optimal InferenceX observations of ``model`` at
    ``isl``/``osl`` (interactivity = median output tokens/s per user, y = output tokens/s per
    GPU), each configuration's latest run. With ``interactivity``: one ``at_interactivity`` row
    per accelerator, linearly interpolated between the two neighbouring frontier points, or
    ``out of range`` with the nearest point (never extrapolated). MLPerf results of the same
    model family sit on the same axes as ``kind=mlperf`` (Server/Interactive at the rules'
    1000/TPOT floor, Offline at 0), never part of the curve. Costs per million output tokens
    at the assumed rate and at the Azure list price; energy per output token where valid, its
    scope said (GPU power vs wall power: not comparable)."""
    divisions = buyer_choice("mlperf_division", q.mlperf_division, "closed", DIVISIONS)
    available = buyer_choice("mlperf_availability", q.mlperf_availability, "available",
                             AVAILABILITY)
    day("date", q.date)  # a bad date is said before a bad offer or os, as it always was
    _priced_at(request, q)
    f = q.model_copy(update={"mlperf_division": divisions, "mlperf_availability": available,
                             "offer": check_choice("offer", [q.offer], CHOICES["offer"])[0],
                             "os": check_choice("os", [q.os], CHOICES["os"])[0]})
    query = queries.frontier_query(f)
    return render_list(request, query, q, parse_as_of(q.as_of))


def _priced_at(request: Request, q: FrontierParams) -> None:
    """A provider, or a region asked for, that this snapshot prices nothing at is a 422 (the
    list-price columns were silently empty); the region only without provider."""
    region = "region" in q.model_fields_set
    one_price_place(q.provider is not None, region)
    if q.provider is None and not region:
        return
    param, asked = (("provider", q.provider) if q.provider is not None
                    else ("region", q.region))
    asked = asked.strip().lower()
    with snapshot(request) as (_, con):
        known = queries.price_places(con, param)
    if param == "provider":
        known.append("cheapest")
    if asked not in known:
        raise QueryError(f"{param}: no {param} {asked!r} prices anything in this snapshot "
                         f"(known: {', '.join(known[:25]) or 'none'})", param=param)


class ClaimObservationParams(PageParams):
    vendor: list[str] | None = Field(None, description="Vendor, e.g. Groq.")
    model: list[str] | None = Field(None, description="Claim model, e.g. gpt-oss-120b.")
    as_of: str | None = as_of_param(AS_OF)


@router.get("/claim-observations", summary="Per-user speed claims against InferenceX "
            "observations", response_model=ListPage[ClaimObservationPublic])
def claim_observations(request: Request,
                       q: Annotated[ClaimObservationParams, Query()]) -> Response:
    """Each vendor claim of output tokens/s per user on a model InferenceX measures, next to
    the nearest comparable observation (same model, the claim's accelerator where it names
    one, interactivity at or above the claim's), with the verdict in words and the observation
    cited (id, run URL)."""
    return render_list(request, queries.claim_observations_query(
        vendor=listed(q.vendor), model=listed(q.model)), q, parse_as_of(q.as_of))
