"""Derived figures: scenario ratios, costs per million tokens, latency bounds, claim checks,
per-accelerator throughput, energy and trends."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import Field

from api.params import (
    CHOICES,
    PRICES_AS_OF,
    PageParams,
    ResultParams,
    as_of_param,
    bounded,
    buyer_choice,
    check_choice,
    choice,
    listed,
    one_price_place,
    vocab,
)
from api.routes.common import parse_as_of, reader, render_list, snapshot
from warehouse import queries
from warehouse.exceptions import QueryError
from warehouse.figures.derived import PRICED_EVIDENCE
from warehouse.model.public import (
    ClaimCheckPublic,
    CostPublic,
    EnergyPublic,
    LatencyBoundPublic,
    ListPage,
    PerAcceleratorPublic,
    ScenarioRatioPublic,
    TrendPublic,
)
from warehouse.model.vocabulary import ASSUMED_RATES, OFFERS_SAID, Offer
from warehouse.queries.builders import RoundScope, one_of

router = APIRouter(prefix="/v1", tags=["derived"])


class RatioParams(ResultParams):
    include_flagged: bool = Field(True, description="Include Samples/s-vs-Queries/s pairings "
                                  "(flagged=true).")
    min_ratio: float | None = Field(None, description="Smallest ratio.", allow_inf_nan=False)
    max_ratio: float | None = Field(None, description="Largest ratio.", allow_inf_nan=False)


@router.get("/ratios", summary="Server/Offline and Interactive/Offline throughput ratios",
            response_model=ListPage[ScenarioRatioPublic])
def ratios(request: Request, q: Annotated[RatioParams, Query()]) -> Response:
    """Each pair carries both source result ids, accelerator, availability and inferred flags.
    ``scenario`` is the one compared with Offline (Server or Interactive). Closed division,
    available systems unless ``division``/``availability`` say otherwise."""
    bounded("ratio", q.min_ratio, q.max_ratio)
    return render_list(request, queries.ratios_query(
        q.filters(), include_flagged=q.include_flagged, min_ratio=q.min_ratio,
        max_ratio=q.max_ratio), q)


# One rate= value: a positive decimal, alone (every accelerator) or after an accelerator id;
# declared in the schema, checked by ``_rates`` (whose 422 says it in words).
RATE = r"^([A-Za-z0-9][A-Za-z0-9._-]*:)?(0*[1-9][0-9]*(\.[0-9]*)?|0*\.[0-9]*[1-9][0-9]*)$"


class CostParams(ResultParams):
    basis: list[str] | None = vocab("basis", "list_price (Azure price per accelerator-hour) "
                                    "and/or assumed (rates); default both.")
    rate: list[Annotated[str, Field(json_schema_extra={"pattern": RATE})]] | None = Field(None, description=(
        "Assumed USD per accelerator-hour (> 0; repeatable or comma-separated): a flat rate for "
        "every accelerator (10), or one accelerator's (nvidia-b200-sxm-180gb:6, named as "
        "accelerator= names it), which prices that accelerator's rows alone; default 5, 10 and "
        "15 when no rate is given."))
    region: str = Field("eastus2", description="Azure region for list prices (not with "
                        "provider).")
    provider: list[str] | None = Field(None, description=(
        "Price the list_price basis on these providers instead of one Azure region: azure (its "
        "API) or a cloud of the SkyPilot catalog (aws, gcp, lambda, runpod, vast...), each at its "
        "cheapest rate for the offer in any region; all: every provider, plus the cheapest and "
        "the median across them."))
    offer: str = vocab("offer", f"{OFFERS_SAID}.", Offer.on_demand)
    os: str = vocab("os", "linux or windows.", "linux")
    as_of: str | None = as_of_param(PRICES_AS_OF)
    price_status: list[str] | None = vocab("price_status", "priced, no price or assumed.")
    evidence: list[str] | None = one_of(PRICED_EVIDENCE, (
        "What to price: measured (MLPerf results; the default), third_party_measured "
        "(InferenceX observations) and/or self_measured (your imported runs). An observation is "
        "priced as a system of its every GPU serving its output tokens/s (current, reconciled "
        "rows only); round, division and availability filter MLPerf's rows."))


@router.get("/costs", summary="Cost per million tokens on list-price and assumed bases",
            response_model=ListPage[CostPublic])
def costs(request: Request, q: Annotated[CostParams, Query()]) -> Response:
    """Every Tokens/s result; results whose accelerator has no price say 'no price'. Closed
    division, available systems unless ``division``/``availability`` say otherwise. The
    default basis is both, or the assumed rates alone when the snapshot has no Azure prices
    (the source never loaded or is switched off)."""
    bases = choice("basis", q.basis) or (["list_price", "assumed"] if _has_prices(request)
                                         else ["assumed"])
    offer = check_choice("offer", [q.offer], CHOICES["offer"])[0]
    os = check_choice("os", [q.os], CHOICES["os"])[0]
    statuses = choice("price_status", q.price_status)
    providers = listed(q.provider)
    one_price_place(bool(providers), "region" in q.model_fields_set)
    rates, per_accelerator = _rates(listed(q.rate))
    if per_accelerator:
        per_accelerator = _resolved(request, per_accelerator)
    query = queries.costs_query(
        q.filters(), bases=bases, rates=rates, accelerator_rates=per_accelerator,
        providers=providers, region=q.region, offer=offer, os=os,
        as_of=parse_as_of(q.as_of), price_status=statuses,
        evidence=check_choice("evidence", listed(q.evidence), PRICED_EVIDENCE))
    return render_list(request, query, q)


def _rates(given: list[str]) -> tuple[list[float], dict[str, float]]:
    """Flat rates and per-accelerator rates (``id:rate``) of ``rate=``; the defaults when no
    flat rate is given. 422 naming the token that is not a positive number."""
    flat: list[float] = []
    per: dict[str, float] = {}
    for token in given:
        if not re.fullmatch(RATE, token.strip()):  # the schema's pattern, said in words
            raise QueryError(f"rate: {token!r} is not a positive number of USD per "
                             "accelerator-hour, or accelerator-id:rate", param="rate")
        name, _, value = token.strip().rpartition(":")
        rate = float(value)
        if name:
            per[name.lower()] = rate
        else:
            flat.append(rate)
    return (flat or ([] if per else list(ASSUMED_RATES))), per


def _resolved(request: Request, per: dict[str, float]) -> dict[str, float]:
    """Per-accelerator rates keyed by the ids their names resolve to (as ``accelerator=``
    resolves them); a name no accelerator of the snapshot answers to is a 422 naming it."""
    out: dict[str, float] = {}
    with snapshot(request) as (_, con):
        aliases = queries.accelerator_aliases(con)
        known = {i for i, _ in aliases}
        for name, rate in per.items():
            try:
                ids = queries.resolve_accelerators(con, (name,), aliases)
            except QueryError as e:
                raise QueryError(f"rate: {e}", param="rate") from None
            if not known.intersection(ids):
                raise QueryError(f"rate: no accelerator {name!r} in this snapshot (its ids: "
                                 "/v1/accelerators)", param="rate")
            out.update(dict.fromkeys(ids, rate))
    return out


def _has_prices(request: Request) -> bool:
    """Whether the snapshot served has Azure prices: without them (a source never loaded or
    switched off) the default basis is the assumed rates alone, not a 'no price' row per
    result."""
    opened = reader(request).get()
    if opened.id is None:  # nothing published: the answer is empty either way
        return True
    return "azure_prices" in opened.loaded_sources()


class LatencyParams(ResultParams):
    answer_tokens: int | None = Field(None, ge=1, le=1_000_000, description="Also compute the "
                                      "end-to-end time of an answer of this many tokens at the "
                                      "limits.")


@router.get("/latency-bounds", summary="Per-user speed floor, concurrency and answer time from "
            "the MLPerf latency limits", response_model=ListPage[LatencyBoundPublic])
def latency_bounds(request: Request, q: Annotated[LatencyParams, Query()]) -> Response:
    """min tokens/s per user = 1000/TPOT; max streams = throughput x TPOT; answer time =
    TTFT + (n - 1) x TPOT. Closed division, available systems unless ``division``/
    ``availability`` say otherwise."""
    return render_list(request, queries.latency_query(q.filters(),
                                                      answer_tokens=q.answer_tokens), q)


class ClaimCheckParams(RoundScope, PageParams):
    vendor: list[str] | None = Field(None, description="Vendor, e.g. Cerebras (any case).")
    evidence: list[str] | None = vocab("evidence", "Claim evidence label.")
    metric: list[str] | None = Field(None, description="Claim metric.")
    verdict: list[str] | None = Field(None, description="Verdict, as the rows say it (any "
                                      "case).")


@router.get("/claim-checks", summary="Each vendor claim next to the measured evidence",
            response_model=ListPage[ClaimCheckPublic])
def claim_checks(request: Request, q: Annotated[ClaimCheckParams, Query()]) -> Response:
    """Verdict in words, closest measured result id, figures recomputed from specs. The
    closest result is chosen among closed-division, available systems unless
    ``division``/``availability`` say otherwise, as on every route over MLPerf results."""
    return render_list(request, queries.claim_checks_query(
        round=listed(q.round), vendor=listed(q.vendor), evidence=choice("evidence", q.evidence),
        metric=listed(q.metric), verdict=listed(q.verdict),
        division=buyer_choice("division", q.division, "closed"),
        availability=buyer_choice("availability", q.availability, "available")), q)


class UnitParams(ResultParams):
    units: list[str] | None = Field(None, description="Units, e.g. Tokens/s.")


@router.get("/per-accelerator", summary="Throughput results per accelerator",
            response_model=ListPage[PerAcceleratorPublic])
def per_accelerator(request: Request, q: Annotated[UnitParams, Query()]) -> Response:
    """result / total_accelerators (aggregate throughput per accelerator, not per user);
    systems with no accelerator are left out. Closed division, available systems unless
    ``division``/``availability`` say otherwise."""
    return render_list(request, queries.per_accelerator_query(q.filters(),
                                                              units=listed(q.units)), q)


@router.get("/energy", summary="Energy efficiency: tokens (or samples) per joule",
            response_model=ListPage[EnergyPublic])
def energy(request: Request, q: Annotated[UnitParams, Query()]) -> Response:
    """Every result with a power measurement: result ÷ watts (tokens/J for Tokens/s) and
    joules per unit; stream scenarios from their energy per query (mJ). Closed division,
    available systems unless ``division``/``availability`` say otherwise."""
    return render_list(request, queries.energy_query(q.filters(), units=listed(q.units)), q)


@router.get("/trends", summary="Trends across rounds: best per-accelerator result per round",
            response_model=ListPage[TrendPublic])
def trends(request: Request, q: Annotated[ResultParams, Query()]) -> Response:
    """Per accelerator, model family, scenario and units: the best per-accelerator result of
    each round, the system behind it, and the change against the previous round that has one.
    ``round`` picks the rounds shown, not the ones compared with: a v6.1 row's change is
    against the round before it even when only v6.1 is asked for. Defaults to what a buyer
    can get (closed division, available systems)."""
    return render_list(request, queries.trends_query(q.filters()), q)
