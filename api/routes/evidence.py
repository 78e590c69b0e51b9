"""Curated evidence and rules: claims, hardware specs, model shapes, MLPerf latency rules."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response
from pydantic import Field

from api.errors import NOT_FOUND
from api.params import AS_OF, NoQuery, PageParams, as_of_param, check_choice, choice, listed, vocab
from api.routes.common import parse_as_of, render_item, render_list, snapshot
from warehouse import queries
from warehouse.model.public import (
    BenchmarkRulePublic,
    ClaimItem,
    ClaimPublic,
    HardwareCatalogPublic,
    ListPage,
    ModelShapePublic,
)
from warehouse.model.vocabulary import LATENCY_SCENARIOS
from warehouse.queries.builders import one_of

router = APIRouter(prefix="/v1", tags=["evidence"])


class ClaimParams(PageParams):
    vendor: list[str] | None = Field(None, description="Vendor, e.g. Cerebras.")
    evidence: list[str] | None = vocab("evidence", "Evidence label, e.g. vendor_claim.")
    metric: list[str] | None = Field(None, description="Metric, e.g. "
                                     "output_tokens_per_s_per_user.")
    model: list[str] | None = Field(None, description="Model the figure is about.")
    product: str | None = Field(None, description="Substring of the product name.")
    as_of: str | None = as_of_param(AS_OF)


@router.get("/claims", summary="Dated vendor claims, projections and reported figures",
            response_model=ListPage[ClaimPublic])
def list_claims(request: Request, q: Annotated[ClaimParams, Query()]) -> Response:
    """Every curated claim with its evidence label, dates, source URL and quote."""
    return render_list(request, queries.claims_query(
        vendor=listed(q.vendor), evidence=choice("evidence", q.evidence), metric=listed(q.metric),
        model=listed(q.model), product=q.product), q, parse_as_of(q.as_of))


@router.get("/claims/{claim_id}", summary="One claim, its source file snapshot and its history",
            response_model=ClaimItem, responses=NOT_FOUND)
def get_claim(request: Request, claim_id: Annotated[str, Path(description="Claim id.")],
              _: NoQuery) -> Response:
    """One claim, the curated file snapshot it was read from, and its earlier versions (a
    withdrawn claim answers with ``row: null`` and its history)."""
    with snapshot(request) as (opened, con):
        detail = queries.claim_detail(con, claim_id)
    if detail is None:
        raise HTTPException(404, f"no claim {claim_id!r} in snapshot {opened.id}")
    return render_item(request, opened, detail)


class HardwareParams(PageParams):
    hardware: list[str] | None = Field(None, description="Hardware id, e.g. nvidia-h100-sxm.")
    vendor: list[str] | None = Field(None, description="Vendor.")
    metric: list[str] | None = Field(None, description="Metric, e.g. memory_bandwidth.")
    kind: list[str] | None = Field(None, description="accelerator, system or rack.")


@router.get("/hardware", summary="Hardware peak figures (vendor specs), one metric per row",
            response_model=ListPage[HardwareCatalogPublic])
def list_hardware(request: Request, q: Annotated[HardwareParams, Query()]) -> Response:
    """Specs in SI units (bytes, bytes/s, FLOP/s) with their source and check date."""
    return render_list(request, queries.hardware_query(
        hardware=listed(q.hardware), vendor=listed(q.vendor), metric=listed(q.metric),
        kind=listed(q.kind)), q)


class ModelParams(PageParams):
    illustrative: bool | None = Field(None, description="Only the article's illustrative "
                                      "shapes (true) or only real models (false).")


@router.get("/models", summary="Model shapes used by the calculators",
            response_model=ListPage[ModelShapePublic])
def list_models(request: Request, q: Annotated[ModelParams, Query()]) -> Response:
    """Parameters, active parameters, layers, KV heads, head dim; empty where unknown."""
    return render_list(request, queries.models_query(illustrative=q.illustrative), q)


class RuleParams(PageParams):
    model: list[str] | None = Field(None, description="Benchmark model, e.g. llama2-70b.")
    scenario: list[str] | None = one_of(LATENCY_SCENARIOS, "Server or Interactive.")
    current: bool = Field(True, description="Only the latest rules document (false: every "
                          "version ever fetched).")


@router.get("/rules", summary="MLPerf TTFT/TPOT limits per benchmark, from the rules document",
            response_model=ListPage[BenchmarkRulePublic])
def list_rules(request: Request, q: Annotated[RuleParams, Query()]) -> Response:
    """Limits with the document line they were read from and the document's sha256."""
    return render_list(request, queries.rules_query(
        model=listed(q.model),
        scenario=check_choice("scenario", listed(q.scenario), LATENCY_SCENARIOS),
        current=q.current), q)
