"""Azure list prices (versioned) and the accelerators they rent."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from api.routes.common import (
    PageDep,
    check_choice,
    listed,
    parse_as_of,
    render_item,
    render_list,
    snapshot,
)
from warehouse import queries
from warehouse.queries import ListQuery

router = APIRouter(prefix="/v1", tags=["prices"])

OFFERS = {o: o for o in ("on_demand", "spot", "low_priority", "reservation", "dev_test")}
OSES = {"linux": "linux", "windows": "windows"}
TYPES = {"consumption": "Consumption", "reservation": "Reservation",
         "devtestconsumption": "DevTestConsumption"}


def as_of_clause(moment: datetime | None) -> tuple[str, list]:
    """Versions valid at ``moment`` (default: now, i.e. current and still listed)."""
    if moment is None:
        return "t.valid_to IS NULL", []
    return "t.valid_from <= ? AND (t.valid_to IS NULL OR t.valid_to > ?)", [moment, moment]


AsOf = Annotated[str | None, Query(description="Prices in effect at this date (YYYY-MM-DD, end of "
                                   "day UTC) or timestamp; default: the current list.")]


@router.get("/prices", summary="Azure GPU VM list prices, with price per accelerator-hour")
def list_prices(
    request: Request, p: PageDep,
    sku: Annotated[list[str] | None, Query(description="VM size, e.g. Standard_ND96isr_H100_v5.")] = None,
    accelerator: Annotated[list[str] | None, Query(description="Accelerator id, e.g. nvidia-h100-sxm.")] = None,
    region: Annotated[list[str] | None, Query(description="Region, e.g. eastus2.")] = None,
    type: Annotated[list[str] | None, Query(
        description="Consumption, Reservation or DevTestConsumption.")] = None,
    offer: Annotated[list[str] | None, Query(
        description="on_demand, spot, low_priority, reservation, dev_test.")] = None,
    os: Annotated[list[str] | None, Query(description="linux or windows.")] = None,
    as_of: AsOf = None,
) -> Response:
    """Each price version valid at ``as_of`` (evidence: list_price), with its source page."""
    q = ListQuery(relation="price_catalog", with_source=True, equals={
        "arm_sku_name": listed(sku), "accelerator_id": listed(accelerator),
        "arm_region_name": listed(region),
        "price_type": check_choice("type", listed(type), TYPES),
        "offer": check_choice("offer", listed(offer), OFFERS),
        "os": check_choice("os", listed(os), OSES)})
    q.extra_where.append(as_of_clause(parse_as_of(as_of)))
    return render_list(request, q, p)


@router.get("/prices/history", summary="Every version of one VM size's price (time series)")
def price_history(
    request: Request, p: PageDep,
    sku: Annotated[str, Query(description="VM size, e.g. Standard_ND96isr_H100_v5.")],
    region: Annotated[list[str] | None, Query(description="Region, e.g. eastus2.")] = None,
    offer: Annotated[list[str] | None, Query(description="on_demand (default: all offers).")] = None,
    os: Annotated[list[str] | None, Query(description="linux or windows.")] = None,
) -> Response:
    """Versions with valid_from/valid_to, oldest first unless ``sort`` says otherwise."""
    q = ListQuery(relation="price_catalog", with_source=True, equals={
        "arm_sku_name": [sku], "arm_region_name": listed(region),
        "offer": check_choice("offer", listed(offer), OFFERS),
        "os": check_choice("os", listed(os), OSES)})
    p.sort = p.sort or ["price_key", "valid_from"]
    return render_list(request, q, p)


@router.get("/accelerators", summary="Accelerator ids, their MLPerf spellings, the VM sizes that rent them")
def accelerators(request: Request) -> Response:
    """One entry per accelerator id: aliases seen in MLPerf, Azure SKUs with accelerators per VM."""
    with snapshot(request) as (opened, con):
        rows = queries.accelerators(con)
    return render_item(request, opened, {"total": len(rows), "rows": rows})
