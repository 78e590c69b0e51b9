"""Derived figures: scenario ratios, costs per million tokens, latency bounds, claim checks."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import BeforeValidator

from api.routes.common import (
    CHOICES,
    PageDep,
    check_choice,
    choice,
    comma_list,
    listed,
    parse_as_of,
    ranked_filters,
    render_list,
    result_filters,
)
from api.routes.prices import AsOf
from warehouse import queries
from warehouse.exceptions import QueryError
from warehouse.public import (
    ClaimCheckPublic,
    CostPublic,
    EnergyPublic,
    LatencyBoundPublic,
    ListPage,
    PerAcceleratorPublic,
    ScenarioRatioPublic,
    TrendPublic,
)
from warehouse.vocabulary import ASSUMED_RATES

router = APIRouter(prefix="/v1", tags=["derived"])

Round = Annotated[list[str] | None, Query(description="MLPerf round, e.g. v6.1.")]
Division = Annotated[list[str] | None, Query(description="closed or open.")]
Organization = Annotated[list[str] | None, Query(description="Submitter, e.g. NVIDIA.")]
Model = Annotated[list[str] | None, Query(description="Model id or family, e.g. deepseek-r1, "
                                          "llama2-70b (both accuracy targets) or llama2-70b-99.")]
Accelerator = Annotated[list[str] | None, Query(description=(
    "Accelerator: an id (amd-mi355x), a published spelling or a short name (H200, MI355X, "
    "B200); an ambiguous short name (H100) is a 422 listing the ids."))]
Availability = Annotated[list[str] | None, Query(description="available, preview or rdi.")]
# Routes that rank systems default to what a buyer can get.
BuyerDivision = Annotated[list[str] | None, Query(description="closed (default) or open; all "
                                                  "for both.")]
BuyerAvailability = Annotated[list[str] | None, Query(description="available (default), "
                                                      "preview or rdi; all for every system.")]


@router.get("/ratios", summary="Server/Offline and Interactive/Offline throughput ratios",
            response_model=ListPage[ScenarioRatioPublic])
def ratios(
    request: Request, p: PageDep, round: Round = None, division: BuyerDivision = None,
    organization: Organization = None, model: Model = None, accelerator: Accelerator = None,
    availability: BuyerAvailability = None,
    scenario: Annotated[list[str] | None, Query(description="Server or Interactive (the "
                                                "scenario compared with Offline).")] = None,
    include_flagged: Annotated[bool, Query(description="Include Samples/s-vs-Queries/s "
                                           "pairings (flagged=true).")] = True,
    min_ratio: Annotated[float | None, Query(description="Smallest ratio.")] = None,
    max_ratio: Annotated[float | None, Query(description="Largest ratio.")] = None,
) -> Response:
    """Each pair carries both source result ids, accelerator, availability and inferred flags.
    Closed division, available systems unless ``division``/``availability`` say otherwise."""
    return render_list(request, queries.ratios_query(
        ranked_filters(round, division, organization, model, accelerator, availability, scenario),
        include_flagged=include_flagged, min_ratio=min_ratio, max_ratio=max_ratio), p)


@router.get("/costs", summary="Cost per million tokens on list-price and assumed bases",
            response_model=ListPage[CostPublic])
def costs(
    request: Request, p: PageDep, round: Round = None, division: BuyerDivision = None,
    organization: Organization = None, model: Model = None, accelerator: Accelerator = None,
    availability: BuyerAvailability = None,
    scenario: Annotated[list[str] | None, Query(description="Offline, Server or Interactive.")] = None,
    basis: Annotated[list[str] | None, Query(description="list_price (Azure price per "
                     "accelerator-hour) and/or assumed (rates); default both.")] = None,
    rate: Annotated[list[float] | None, BeforeValidator(comma_list), Query(
        description="Assumed USD per accelerator-hour (> 0; repeatable or comma-separated); "
                    "default 5, 10 and 15.")] = None,
    region: Annotated[str, Query(description="Azure region for list prices.")] = "eastus2",
    offer: Annotated[str, Query(description="on_demand, spot, low_priority, reservation or "
                                "dev_test.")] = "on_demand",
    os: Annotated[str, Query(description="linux or windows.")] = "linux",
    as_of: AsOf = None,
    price_status: Annotated[list[str] | None, Query(description="priced, no price or "
                                                    "assumed.")] = None,
) -> Response:
    """Every Tokens/s result; results whose accelerator has no price say 'no price'. Closed
    division, available systems unless ``division``/``availability`` say otherwise."""
    bases = choice("basis", basis) or ["list_price", "assumed"]
    rates = rate or list(ASSUMED_RATES)
    bad = [r for r in rates if not r > 0 or r != r or r == float("inf")]
    if bad:
        raise QueryError(f"rate must be a positive number of USD per accelerator-hour (got {bad[0]})",
                         param="rate")
    return render_list(request, queries.costs_query(
        ranked_filters(round, division, organization, model, accelerator, availability, scenario),
        bases=bases, rates=rates, region=region, offer=check_choice("offer", [offer], CHOICES["offer"])[0],
        os=check_choice("os", [os], CHOICES["os"])[0], as_of=parse_as_of(as_of), price_status=listed(price_status)), p)


@router.get("/latency-bounds", summary="Per-user speed floor, concurrency and answer time from "
            "the MLPerf latency limits", response_model=ListPage[LatencyBoundPublic])
def latency_bounds(
    request: Request, p: PageDep, round: Round = None, division: BuyerDivision = None,
    organization: Organization = None, model: Model = None, accelerator: Accelerator = None,
    availability: BuyerAvailability = None,
    scenario: Annotated[list[str] | None, Query(description="Server or Interactive.")] = None,
    answer_tokens: Annotated[int | None, Query(ge=1, le=1_000_000, description="Also compute the "
                             "end-to-end time of an answer of this many tokens at the limits.")] = None,
) -> Response:
    """min tokens/s per user = 1000/TPOT; max streams = throughput x TPOT; answer time =
    TTFT + (n - 1) x TPOT. Closed division, available systems unless ``division``/
    ``availability`` say otherwise."""
    return render_list(request, queries.latency_query(
        ranked_filters(round, division, organization, model, accelerator, availability, scenario),
        answer_tokens=answer_tokens), p)


@router.get("/claim-checks", summary="Each vendor claim next to the measured evidence",
            response_model=ListPage[ClaimCheckPublic])
def claim_checks(
    request: Request, p: PageDep, round: Round = None,
    vendor: Annotated[list[str] | None, Query(description="Vendor, e.g. Cerebras.")] = None,
    evidence: Annotated[list[str] | None, Query(description="Claim evidence label.")] = None,
    metric: Annotated[list[str] | None, Query(description="Claim metric.")] = None,
) -> Response:
    """Verdict in words, closest measured result id, figures recomputed from specs."""
    return render_list(request, queries.claim_checks_query(
        round=listed(round), vendor=listed(vendor), evidence=choice("evidence", evidence),
        metric=listed(metric)), p)


Units = Annotated[list[str] | None, Query(description="Units, e.g. Tokens/s.")]


@router.get("/per-accelerator", summary="Throughput results per accelerator",
            response_model=ListPage[PerAcceleratorPublic])
def per_accelerator(
    request: Request, p: PageDep, round: Round = None, division: Division = None,
    organization: Organization = None, model: Model = None, accelerator: Accelerator = None,
    availability: Availability = None,
    scenario: Annotated[list[str] | None, Query(description="Offline, Server or Interactive.")] = None,
    units: Units = None,
) -> Response:
    """result / total_accelerators (aggregate throughput per accelerator, not per user);
    systems with no accelerator are left out."""
    return render_list(request, queries.per_accelerator_query(
        result_filters(round, division, organization, model, accelerator, availability, scenario),
        units=listed(units)), p)


@router.get("/energy", summary="Energy efficiency: tokens (or samples) per joule",
            response_model=ListPage[EnergyPublic])
def energy(
    request: Request, p: PageDep, round: Round = None, division: Division = None,
    organization: Organization = None, model: Model = None, accelerator: Accelerator = None,
    availability: Availability = None,
    scenario: Annotated[list[str] | None, Query(description="Offline, Server, Interactive, "
                                                "SingleStream or MultiStream.")] = None,
    units: Units = None,
) -> Response:
    """Every result with a power measurement: result ÷ watts (tokens/J for Tokens/s) and
    joules per unit; stream scenarios from their energy per query (mJ)."""
    return render_list(request, queries.energy_query(
        result_filters(round, division, organization, model, accelerator, availability, scenario),
        units=listed(units)), p)


@router.get("/trends", summary="Trends across rounds: best per-accelerator result per round",
            response_model=ListPage[TrendPublic])
def trends(
    request: Request, p: PageDep,
    accelerator: Accelerator = None, model: Model = None,
    scenario: Annotated[list[str] | None, Query(description="Offline, Server or Interactive.")] = None,
    division: BuyerDivision = None, availability: BuyerAvailability = None,
    organization: Organization = None,
) -> Response:
    """Per accelerator, model family, scenario and units: the best per-accelerator result of
    each round, the system behind it, and the change against the previous round that has one.
    Defaults to what a buyer can get (closed division, available systems)."""
    return render_list(request, queries.trends_query(
        ranked_filters(None, division, organization, model, accelerator, availability, scenario)), p)
