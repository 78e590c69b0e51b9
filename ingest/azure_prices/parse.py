"""Azure Retail Prices API pages → typed ``azure_price`` rows.

``parse`` turns one page into rows, failing with the page and item index on an item it cannot
read; ``classify`` and the hourly price follow the vocabulary (offers, OS, hourly units,
reservation terms) in ``warehouse.model.vocabulary``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime

from ingest import jsonsafe
from ingest.http import Raw
from warehouse.exceptions import ParseError
from warehouse.model.vocabulary import (
    AZURE_OS_TAILS,
    HOURLY_UNITS,
    HOURS_IN_TERM,
    Evidence,
    Offer,
    OperatingSystem,
)

SOURCE = "azure_prices"
PARSER_VERSION = "azure-retail-prices/1"
REQUIRED = ("currencyCode", "retailPrice", "unitPrice", "armRegionName", "effectiveStartDate",
            "meterId", "skuId", "productName", "skuName", "unitOfMeasure", "type", "armSkuName")


def price_key(item: dict) -> str:
    """The identity of a price across refreshes."""
    parts = [item.get("meterId"), item.get("skuId"), item.get("armRegionName"), item.get("type"),
             item.get("reservationTerm"), item.get("tierMinimumUnits"), item.get("currencyCode")]
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:16]


def classify(item: dict) -> tuple[str, str]:
    """(os, offer) of an item: the OS from the product name's last word (``AZURE_OS_TAILS``:
    ` Windows` and ` Win` are Windows, ` Series`/` Srs` Linux, anything else unknown); spot and
    low priority from the SKU/meter name; reservation and dev/test from the type."""
    words = str(item.get("productName", "")).split()
    os_name = AZURE_OS_TAILS.get(words[-1] if words else "", OperatingSystem.unknown)
    names = f"{item.get('skuName', '')} {item.get('meterName', '')}"
    kind = item.get("type")
    if kind == "Reservation":
        offer = Offer.reservation
    elif kind == "DevTestConsumption":
        offer = Offer.dev_test
    elif "Spot" in names:
        offer = Offer.spot
    elif "Low Priority" in names:
        offer = Offer.low_priority
    else:
        offer = Offer.on_demand
    return os_name, offer


def _hourly(item: dict, price: float) -> float | None:
    unit = item.get("unitOfMeasure")
    if item.get("type") == "Reservation":
        hours = HOURS_IN_TERM.get(item.get("reservationTerm") or "")
        return price / hours if hours else None
    if unit in HOURLY_UNITS:
        return price
    return None


def parse(raw: Raw, *, page: int, snapshot_id: str, observed_at: datetime) -> Iterator[dict]:
    """Typed rows from one page; ``ParseError`` names the page and the item that is wrong."""
    try:
        body = jsonsafe.loads(raw.body)
    except jsonsafe.JSONRefused as e:
        raise ParseError(f"{SOURCE}: page {page}: the JSON {e}", source=SOURCE,
                         page=page) from None
    if not isinstance(body, dict) or not isinstance(body.get("Items"), list):
        raise ParseError(f"{SOURCE}: page {page} has no Items list", source=SOURCE, page=page)
    for index, item in enumerate(body["Items"]):
        where = f"{SOURCE}: page {page}, item {index}"
        if not isinstance(item, dict):
            raise ParseError(f"{where}: not an object", source=SOURCE, page=page, item=index)
        missing = [f for f in REQUIRED if item.get(f) in (None, "")]
        if missing:
            raise ParseError(f"{where} ({item.get('armSkuName') or item.get('skuName')}): "
                             f"missing {', '.join(missing)}", source=SOURCE, page=page, item=index)
        try:
            retail = float(item["retailPrice"])
            unit_price = float(item["unitPrice"])
            tier = float(item.get("tierMinimumUnits") or 0)
            effective = datetime.fromisoformat(str(item["effectiveStartDate"]).replace("Z", "+00:00"))
        except (TypeError, ValueError) as e:
            raise ParseError(f"{where} ({item.get('armSkuName')}): {e}", source=SOURCE,
                             page=page, item=index) from None
        if not (math.isfinite(retail) and math.isfinite(unit_price) and math.isfinite(tier)):
            raise ParseError(f"{where} ({item.get('armSkuName')}): a price is not a finite "
                             f"number (retailPrice {item['retailPrice']!r}, unitPrice "
                             f"{item['unitPrice']!r})", source=SOURCE, page=page, item=index)
        if effective.tzinfo is None:
            effective = effective.replace(tzinfo=UTC)
        os_name, offer = classify(item)
        key = price_key(item)
        yield {
            "id": hashlib.sha256(f"{key}\x1f{retail}\x1f{unit_price}\x1f{effective.isoformat()}"
                                 .encode()).hexdigest()[:16],
            "price_key": key,
            "meter_id": item["meterId"], "sku_id": item["skuId"],
            "arm_sku_name": item["armSkuName"], "arm_region_name": item["armRegionName"],
            "location": item.get("location"), "price_type": item["type"],
            "reservation_term": item.get("reservationTerm"), "tier_minimum_units": tier,
            "currency": item["currencyCode"], "retail_price": retail, "unit_price": unit_price,
            "unit_of_measure": item["unitOfMeasure"], "hourly_price": _hourly(item, retail),
            "os": os_name, "offer": offer,
            "savings_plan": json.dumps(item["savingsPlan"]) if item.get("savingsPlan") else None,
            "meter_name": item.get("meterName"), "product_name": item.get("productName"),
            "sku_name": item.get("skuName"), "service_name": item.get("serviceName"),
            "effective_start": effective, "valid_from": effective, "valid_to": None,
            "first_seen_at": observed_at, "last_seen_at": observed_at, "listed": True,
            "evidence": Evidence.list_price.value, "source_snapshot_id": snapshot_id,
        }
