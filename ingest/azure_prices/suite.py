"""Azure prices: non-negative, in the configured currency, known units, sane windows."""

from __future__ import annotations

from warehouse.model.vocabulary import HOURLY_UNITS, OFFERS, OPERATING_SYSTEMS
from warehouse.quality.suites import WARNING, Rule, in_set, rows

T = "azure_price"


def rules() -> list[Rule]:
    """The azure_price rules."""
    return [
        rows("azure_price: price is not negative", T,
             "SELECT id, retail_price, unit_price FROM {batch} "
             "WHERE retail_price < 0 OR unit_price < 0"),
        in_set("azure_price: unit of measure is an hourly unit", T, "unit_of_measure",
               HOURLY_UNITS),
        in_set("azure_price: offer is in the vocabulary", T, "offer", OFFERS),
        in_set("azure_price: os is in the vocabulary", T, "os", OPERATING_SYSTEMS),
        rows("azure_price: effectiveStartDate is not after observed_at", T,
             "SELECT id, effective_start, first_seen_at FROM {batch} "
             "WHERE effective_start > first_seen_at"),
        rows("azure_price: no overlapping validity windows for one price key", T,
             "SELECT a.id, a.price_key, a.valid_from, a.valid_to FROM {batch} a JOIN azure_price b "
             "ON a.price_key = b.price_key AND a.id < b.id "
             "AND a.valid_from < coalesce(b.valid_to, 'infinity'::TIMESTAMPTZ) "
             "AND b.valid_from < coalesce(a.valid_to, 'infinity'::TIMESTAMPTZ)"),
        rows("azure_price: one currency", T,
             "SELECT id, currency FROM {batch} WHERE currency <> "
             "(SELECT min(currency) FROM azure_price)"),
        rows("azure_price: at least 80% of GPU VM sizes map to an accelerator", T,
             "SELECT count(DISTINCT arm_sku_name) AS skus, count(DISTINCT arm_sku_name) FILTER "
             "(WHERE arm_sku_name IN (SELECT alias FROM accelerator_alias WHERE kind = 'azure_sku')) "
             "AS mapped FROM {batch} HAVING mapped < 0.8 * skus", severity=WARNING),
    ]
