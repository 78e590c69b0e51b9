"""Azure list prices (versioned) and the accelerators they rent."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from api.routes.common import PageDep, choice, listed, parse_as_of, render_item, render_list, snapshot
from warehouse import queries
from warehouse.public import Accelerators, ListPage, PriceCatalogPublic

router = APIRouter(prefix="/v1", tags=["prices"])


AsOf = Annotated[str | None, Query(description="Prices in effect at this date (YYYY-MM-DD, end of "
                                   "day UTC) or timestamp; default: the current list.")]


@router.get("/prices", summary="Azure GPU VM list prices, with price per accelerator-hour",
            response_model=ListPage[PriceCatalogPublic])
def list_prices(
    request: Request, p: PageDep,
    sku: Annotated[list[str] | None, Query(description="VM size, e.g. Standard_ND96isr_H100_v5.")] = None,
    accelerator: Annotated[list[str] | None, Query(description=(
        "Accelerator id (nvidia-h100-sxm), a spelling or a short name (H200); an ambiguous "
        "short name is a 422 listing the ids."))] = None,
    region: Annotated[list[str] | None, Query(description="Region, e.g. eastus2.")] = None,
    type: Annotated[list[str] | None, Query(
        description="Consumption, Reservation or DevTestConsumption.")] = None,
    offer: Annotated[list[str] | None, Query(
        description="on_demand, spot, low_priority, reservation, dev_test.")] = None,
    os: Annotated[list[str] | None, Query(description="linux or windows.")] = None,
    as_of: AsOf = None,
) -> Response:
    """Each price version valid at ``as_of`` (evidence: list_price), with its source page."""
    return render_list(request, queries.prices_query(
        sku=listed(sku), accelerator=listed(accelerator), region=listed(region),
        price_type=choice("type", type), offer=choice("offer", offer), os=choice("os", os),
        as_of=parse_as_of(as_of)), p)


@router.get("/prices/history", summary="Every version of one VM size's price (time series)",
            response_model=ListPage[PriceCatalogPublic])
def price_history(
    request: Request, p: PageDep,
    sku: Annotated[str, Query(description="VM size, e.g. Standard_ND96isr_H100_v5.")],
    region: Annotated[list[str] | None, Query(description="Region, e.g. eastus2.")] = None,
    offer: Annotated[list[str] | None, Query(description="on_demand (default: all offers).")] = None,
    os: Annotated[list[str] | None, Query(description="linux or windows.")] = None,
) -> Response:
    """Versions with valid_from/valid_to, oldest first unless ``sort`` says otherwise."""
    return render_list(request, queries.price_history_query(
        sku=sku, region=listed(region), offer=choice("offer", offer), os=choice("os", os)), p)


@router.get("/accelerators", summary="Accelerator ids, their MLPerf spellings, the VM sizes that rent them",
            response_model=Accelerators)
def accelerators(request: Request) -> Response:
    """One entry per accelerator id: aliases seen in MLPerf, Azure SKUs with accelerators per VM."""
    with snapshot(request) as (opened, con):
        rows = queries.accelerators(con)
    return render_item(request, opened, {"total": len(rows), "rows": rows})
