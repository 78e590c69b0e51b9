"""Azure list prices (versioned) and the accelerators they rent."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response
from pydantic import Field

from api.errors import NOT_FOUND
from api.params import (
    PRICES_AS_OF,
    NoQuery,
    PageParams,
    as_of_param,
    choice,
    listed,
    vocab,
)
from api.routes.common import parse_as_of, render_item, render_list, snapshot
from warehouse import queries
from warehouse.model.public import AcceleratorDetail, Accelerators, ListPage, PriceCatalogPublic
from warehouse.model.vocabulary import OFFERS

router = APIRouter(prefix="/v1", tags=["prices"])


class PriceParams(PageParams):
    provider: list[str] | None = Field(None, description=(
        "azure (its own API) or a cloud of the SkyPilot catalog (aws, gcp, lambda, runpod, "
        "vast...); default every provider."))
    source: list[str] | None = vocab("source", "azure_prices (the Azure API's own prices) or "
                                     "cloud_prices (the SkyPilot catalog's); default both.")
    sku: list[str] | None = Field(None, description="VM size or instance type, e.g. "
                                  "Standard_ND96isr_H100_v5, 8x-H200-32-65536.")
    accelerator: list[str] | None = Field(None, description=(
        "Accelerator id (nvidia-h100-sxm), a spelling or a short name (H200); an ambiguous "
        "short name is a 422 listing the ids."))
    region: list[str] | None = Field(None, description="Region, e.g. eastus2.")
    type: list[str] | None = vocab("type", "Consumption, Reservation or DevTestConsumption.")
    offer: list[str] | None = vocab("offer", f"{', '.join(OFFERS)}.")
    os: list[str] | None = vocab("os", "linux or windows.")
    as_of: str | None = as_of_param(PRICES_AS_OF)


@router.get("/prices", summary="GPU VM list prices of every provider, with price per "
            "accelerator-hour",
            response_model=ListPage[PriceCatalogPublic])
def list_prices(request: Request, q: Annotated[PriceParams, Query()]) -> Response:
    """Each price version valid at ``as_of`` (evidence: list_price), with its source page."""
    return render_list(request, queries.prices_query(
        provider=listed(q.provider), sku=listed(q.sku),
        source=choice("source", q.source),
        accelerator=listed(q.accelerator), region=listed(q.region),
        price_type=choice("type", q.type), offer=choice("offer", q.offer), os=choice("os", q.os),
        as_of=parse_as_of(q.as_of)), q)


class HistoryParams(PageParams):
    sku: str = Field(description="VM size, e.g. Standard_ND96isr_H100_v5.")
    provider: list[str] | None = Field(None, description="azure or a SkyPilot catalog cloud; "
                                       "default every provider.")
    source: list[str] | None = vocab("source", "azure_prices (the Azure API's own prices) or "
                                     "cloud_prices (the SkyPilot catalog's); default both.")
    region: list[str] | None = Field(None, description="Region, e.g. eastus2.")
    offer: list[str] | None = vocab("offer", "on_demand (default: all offers).")
    os: list[str] | None = vocab("os", "linux or windows.")


@router.get("/prices/history", summary="Every version of one VM size's price (time series)",
            response_model=ListPage[PriceCatalogPublic])
def price_history(request: Request, q: Annotated[HistoryParams, Query()]) -> Response:
    """Versions with valid_from/valid_to, oldest first unless ``sort`` says otherwise."""
    return render_list(request, queries.price_history_query(
        sku=q.sku, provider=listed(q.provider),
        source=choice("source", q.source), region=listed(q.region),
        offer=choice("offer", q.offer), os=choice("os", q.os)), q)


@router.get("/accelerators", summary="Accelerator catalogue: ids, spellings per round, coverage, gaps",
            response_model=Accelerators)
def accelerators(request: Request, _: NoQuery) -> Response:
    """One entry per accelerator id: curated spellings and those seen per MLPerf round, Azure
    SKUs with accelerators per VM, datasheet figures and gaps; then how well each round's
    accelerator names map (coverage) and the names that map to no id (unmapped) or to
    several (ambiguous, never guessed)."""
    with snapshot(request) as (opened, con):
        payload = queries.accelerators(con)
    return render_item(request, opened, payload, memo=True)


@router.get("/accelerators/{accelerator_id}", summary="One accelerator: identity, sourced "
            "figures, spellings per round, rounds, Azure SKUs", response_model=AcceleratorDetail,
            responses=NOT_FOUND)
def accelerator(request: Request, accelerator_id: Annotated[str, Path(description=(
        "Accelerator id, e.g. amd-mi300x (see /v1/accelerators)."))], _: NoQuery) -> Response:
    """Identity, datasheet figures each with its URL, date and quoted text (and the gaps), every
    spelling per MLPerf round with its decorations, the rounds and result counts it appears in,
    and the Azure VM sizes that rent it."""
    with snapshot(request) as (opened, con):
        payload = queries.accelerator_detail(con, accelerator_id)
    if payload is None:
        raise HTTPException(404, f"no accelerator {accelerator_id!r} in the catalogue of "
                                 f"snapshot {opened.id} (see /v1/accelerators)")
    return render_item(request, opened, payload, memo=True)
