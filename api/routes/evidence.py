"""Curated evidence and rules: claims, hardware specs, model shapes, MLPerf latency rules."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response

from api.routes.common import (
    AsOfSnapshot,
    PageDep,
    check_choice,
    choice,
    listed,
    parse_as_of,
    render_item,
    render_list,
    snapshot,
)
from warehouse import queries
from warehouse.public import (
    BenchmarkRulePublic,
    ClaimItem,
    ClaimPublic,
    HardwareCatalogPublic,
    ListPage,
    ModelShapePublic,
)
from warehouse.vocabulary import LATENCY_SCENARIOS

router = APIRouter(prefix="/v1", tags=["evidence"])


@router.get("/claims", summary="Dated vendor claims, projections and reported figures",
            response_model=ListPage[ClaimPublic])
def list_claims(
    request: Request, p: PageDep,
    vendor: Annotated[list[str] | None, Query(description="Vendor, e.g. Cerebras.")] = None,
    evidence: Annotated[list[str] | None, Query(description="Evidence label, e.g. vendor_claim.")] = None,
    metric: Annotated[list[str] | None, Query(description="Metric, e.g. output_tokens_per_s_per_user.")] = None,
    model: Annotated[list[str] | None, Query(description="Model the figure is about.")] = None,
    product: Annotated[str | None, Query(description="Substring of the product name.")] = None,
    as_of: AsOfSnapshot = None,
) -> Response:
    """Every curated claim with its evidence label, dates, source URL and quote."""
    return render_list(request, queries.claims_query(
        vendor=listed(vendor), evidence=choice("evidence", evidence), metric=listed(metric),
        model=listed(model), product=product), p, parse_as_of(as_of))


@router.get("/claims/{claim_id}", summary="One claim, its source file snapshot and its history",
            response_model=ClaimItem, responses={404: {"description": "Unknown claim id."}})
def get_claim(request: Request, claim_id: Annotated[str, Path(description="Claim id.")]) -> Response:
    """One claim, the curated file snapshot it was read from, and its earlier versions (a
    withdrawn claim answers with ``row: null`` and its history)."""
    with snapshot(request) as (opened, con):
        detail = queries.claim_detail(con, claim_id)
    if detail is None:
        raise HTTPException(404, f"no claim {claim_id!r} in snapshot {opened.id}")
    return render_item(request, opened, detail)


@router.get("/hardware", summary="Hardware peak figures (vendor specs), one metric per row",
            response_model=ListPage[HardwareCatalogPublic])
def list_hardware(
    request: Request, p: PageDep,
    hardware: Annotated[list[str] | None, Query(description="Hardware id, e.g. nvidia-h100-sxm.")] = None,
    vendor: Annotated[list[str] | None, Query(description="Vendor.")] = None,
    metric: Annotated[list[str] | None, Query(description="Metric, e.g. memory_bandwidth.")] = None,
    kind: Annotated[list[str] | None, Query(description="accelerator, system or rack.")] = None,
) -> Response:
    """Specs in SI units (bytes, bytes/s, FLOP/s) with their source and check date."""
    return render_list(request, queries.hardware_query(
        hardware=listed(hardware), vendor=listed(vendor), metric=listed(metric),
        kind=listed(kind)), p)


@router.get("/models", summary="Model shapes used by the calculators",
            response_model=ListPage[ModelShapePublic])
def list_models(
    request: Request, p: PageDep,
    illustrative: Annotated[bool | None, Query(description="Only the article's illustrative "
                                               "shapes (true) or only real models (false).")] = None,
) -> Response:
    """Parameters, active parameters, layers, KV heads, head dim; empty where unknown."""
    return render_list(request, queries.models_query(illustrative=illustrative), p)


@router.get("/rules", summary="MLPerf TTFT/TPOT limits per benchmark, from the rules document",
            response_model=ListPage[BenchmarkRulePublic])
def list_rules(
    request: Request, p: PageDep,
    model: Annotated[list[str] | None, Query(description="Benchmark model, e.g. llama2-70b.")] = None,
    scenario: Annotated[list[str] | None, Query(description="Server or Interactive.")] = None,
    current: Annotated[bool, Query(description="Only the latest rules document (false: every "
                                   "version ever fetched).")] = True,
) -> Response:
    """Limits with the document line they were read from and the document's sha256."""
    return render_list(request, queries.rules_query(
        model=listed(model), scenario=check_choice("scenario", listed(scenario), LATENCY_SCENARIOS),
        current=current), p)
