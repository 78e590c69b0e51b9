"""Trust checks of cloud_price: sentinels never priced, spot above on-demand, big moves between
versions, GCP host+GPU sums, and the catalog's Azure rows against the Azure API's own."""

from __future__ import annotations

from ingest.cloud_prices.coverage import AZURE_PAIRS
from warehouse.model.vocabulary import (
    AZURE_CROSSCHECK_TOLERANCE,
    CATALOG_OFFERS,
    CLOUD_MATCHES,
    PRICE_MOVE_FACTOR,
    CatalogSentinel,
    sql_list,
)
from warehouse.quality.suites import WARNING, Rule, in_set, rows

T = "cloud_price"


def rules() -> list[Rule]:
    """The cloud_price rules."""
    return [
        in_set("cloud_price: offer is on_demand, spot or low_priority", T, "offer", CATALOG_OFFERS),
        in_set("cloud_price: accelerator match is in the vocabulary", T, "accelerator_match",
               CLOUD_MATCHES),
        rows("cloud_price: a refused sentinel ($0, GCP's 700.0, a GPU with no host) is never a price", T,
             "SELECT id, cloud, instance_type, region, offer, published_price, refused "
             "FROM {batch} WHERE (refused IS NOT NULL AND hourly_price IS NOT NULL) "
             "OR hourly_price = 0 OR (hourly_price = 700.0 AND accelerator_name ILIKE 'tpu-%')"),
        rows("cloud_price: sentinels refused (kept unpriced, listed here)", T,
             "SELECT id, cloud, instance_type, accelerator_name, region, zone, offer, "
             "published_price, refused FROM {batch} WHERE valid_to IS NULL AND refused IN "
             + sql_list(CatalogSentinel), severity=WARNING),
        rows("cloud_price: spot above on-demand for the same instance, region and zone", T,
             "SELECT s.id, s.cloud, s.instance_type, s.region, s.zone, s.hourly_price AS spot, "
             "d.hourly_price AS on_demand FROM {batch} s JOIN cloud_price d ON "
             "d.price_key <> s.price_key AND d.cloud = s.cloud AND d.instance_type = "
             "s.instance_type AND d.accelerator_name IS NOT DISTINCT FROM s.accelerator_name "
             "AND d.region = s.region AND d.zone IS NOT DISTINCT FROM s.zone AND "
             "d.offer = 'on_demand' AND d.valid_to IS NULL WHERE s.offer = 'spot' AND "
             "s.valid_to IS NULL AND s.hourly_price > d.hourly_price", severity=WARNING),
        rows(f"cloud_price: a price moved more than {PRICE_MOVE_FACTOR:g}x between versions", T,
             "SELECT n.id, n.cloud, n.instance_type, n.region, n.offer, o.hourly_price AS "
             "before, n.hourly_price AS after, n.valid_from FROM {batch} n JOIN cloud_price o "
             "ON o.price_key = n.price_key AND o.valid_to = n.valid_from WHERE "
             f"n.hourly_price > {PRICE_MOVE_FACTOR} * o.hourly_price OR "
             f"n.hourly_price * {PRICE_MOVE_FACTOR} < o.hourly_price", severity=WARNING),
        rows("cloud_price: a GCP GPU price summed into its host is part of the host's price", T,
             "SELECT id, instance_type, region, zone, published_price, gpu_part FROM {batch} "
             "WHERE gpu_part IS NOT NULL AND (cloud <> 'gcp' OR gpu_part > published_price)"),
        rows("cloud_price: no overlapping validity windows for one price key", T,
             "SELECT a.id, a.price_key, a.valid_from, a.valid_to FROM {batch} a JOIN cloud_price b "
             "ON a.price_key = b.price_key AND a.id < b.id "
             "AND a.valid_from < coalesce(b.valid_to, 'infinity'::TIMESTAMPTZ) "
             "AND b.valid_from < coalesce(a.valid_to, 'infinity'::TIMESTAMPTZ)"),
        rows("cloud_price: the catalog's Azure on-demand and spot prices agree with the Azure "
             f"API's (same SKU, region, offer, Linux, within {AZURE_CROSSCHECK_TOLERANCE:.0%})", T,
             f"SELECT * EXCLUDE (disagrees) FROM ({AZURE_PAIRS}) WHERE disagrees",
             severity=WARNING),
    ]
