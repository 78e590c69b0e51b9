"""Curated evidence and rules: claims, hardware specs, model shapes, MLPerf latency rules."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response

from api.routes.common import (
    AsOfSnapshot,
    PageDep,
    check_choice,
    listed,
    parse_as_of,
    render_item,
    render_list,
    snapshot,
)
from warehouse import queries
from warehouse.evidence import Evidence
from warehouse.queries import ListQuery

router = APIRouter(prefix="/v1", tags=["evidence"])
LABELS = {e.value: e.value for e in Evidence}

@router.get("/claims", summary="Dated vendor claims, projections and reported figures")
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
    q = ListQuery(relation="claim", with_source=True, equals={
        "vendor": listed(vendor), "metric": listed(metric), "model": listed(model),
        "evidence": check_choice("evidence", listed(evidence), LABELS)})
    if product:
        q.contains["product"] = product
    return render_list(request, q, p, parse_as_of(as_of))


@router.get("/claims/{claim_id}", summary="One claim, its source file snapshot and its history",
            responses={404: {"description": "Unknown claim id."}})
def get_claim(request: Request, claim_id: Annotated[str, Path(description="Claim id.")]) -> Response:
    """One claim, the curated file snapshot it was read from, and its earlier versions (a
    withdrawn claim answers with ``row: null`` and its history)."""
    with snapshot(request) as (opened, con):
        row = queries.get_one(con, "claim", "id", claim_id)
        source = row and queries.source_snapshot(con, row["source_snapshot_id"])
        _, history, _ = queries.run_list(con, ListQuery(
            relation="claim_history", equals={"claim_id": [claim_id]}, sort=["valid_to"],
            limit=1000, with_source=True))
    if row is None and not history:
        raise HTTPException(404, f"no claim {claim_id!r} in snapshot {opened.id}")
    return render_item(request, opened, {"row": row, "source": source, "history": history,
                                         "withdrawn": row is None})


@router.get("/hardware", summary="Hardware peak figures (vendor specs), one metric per row")
def list_hardware(
    request: Request, p: PageDep,
    hardware: Annotated[list[str] | None, Query(description="Hardware id, e.g. nvidia-h100-sxm.")] = None,
    vendor: Annotated[list[str] | None, Query(description="Vendor.")] = None,
    metric: Annotated[list[str] | None, Query(description="Metric, e.g. memory_bandwidth.")] = None,
    kind: Annotated[list[str] | None, Query(description="accelerator, system or rack.")] = None,
) -> Response:
    """Specs in SI units (bytes, bytes/s, FLOP/s) with their source and check date."""
    return render_list(request, ListQuery(relation="hardware_catalog", with_source=True, equals={
        "hardware_id": listed(hardware), "vendor": listed(vendor), "metric": listed(metric),
        "kind": listed(kind)}), p)


@router.get("/models", summary="Model shapes used by the calculators")
def list_models(
    request: Request, p: PageDep,
    illustrative: Annotated[bool | None, Query(description="Only the article's illustrative "
                                               "shapes (true) or only real models (false).")] = None,
) -> Response:
    """Parameters, active parameters, layers, KV heads, head dim; empty where unknown."""
    q = ListQuery(relation="model_shape", with_source=True)
    if illustrative is not None:
        q.equals["illustrative"] = [illustrative]
    return render_list(request, q, p)


@router.get("/rules", summary="MLPerf TTFT/TPOT limits per benchmark, from the rules document")
def list_rules(
    request: Request, p: PageDep,
    model: Annotated[list[str] | None, Query(description="Benchmark model, e.g. llama2-70b.")] = None,
    scenario: Annotated[list[str] | None, Query(description="Server or Interactive.")] = None,
    current: Annotated[bool, Query(description="Only the latest rules document (false: every "
                                   "version ever fetched).")] = True,
) -> Response:
    """Limits with the document line they were read from and the document's sha256."""
    q = ListQuery(relation="benchmark_rule", with_source=True, equals={
        "model_family": listed(model),
        "scenario": check_choice("scenario", listed(scenario),
                                 {"server": "Server", "interactive": "Interactive"})})
    if current:
        q.extra_where.append((
            "t.source_snapshot_id = (SELECT id FROM source_snapshot WHERE kind = 'rules_document' "
            "ORDER BY fetched_at DESC LIMIT 1)", []))
    return render_list(request, q, p)
