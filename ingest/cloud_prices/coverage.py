"""How the catalog's GPU rows map to accelerator ids, per cloud (run after every refresh)."""

from __future__ import annotations

import duckdb

from warehouse.model.vocabulary import AZURE_CROSSCHECK_TOLERANCE, CloudMatch
from warehouse.storage.db import fetch_dicts, scalar

# The catalog's current Azure on-demand and spot prices beside the Azure API's own for the same
# VM size, region and offer (Linux, pay as you go), and whether they disagree by more than the
# tolerance (the catalog's spot column repeats the on-demand price for some VM sizes). The
# validation rule lists the disagreeing pairs; the run report counts them.
AZURE_PAIRS = (
    "SELECT c.id, c.instance_type AS sku, c.region, c.offer, c.hourly_price AS catalog_price, "  # noqa: S608 - a constant of this code
    "a.hourly_price AS azure_api_price, c.catalog_commit, "
    f"abs(c.hourly_price - a.hourly_price) > {AZURE_CROSSCHECK_TOLERANCE} * a.hourly_price "
    "AS disagrees FROM {batch} c JOIN azure_price a ON a.arm_sku_name = c.instance_type AND "
    "a.arm_region_name = c.region AND a.os = 'linux' AND a.offer = c.offer AND "
    "a.price_type = 'Consumption' AND a.valid_to IS NULL WHERE c.cloud = 'azure' AND "
    "c.valid_to IS NULL AND c.offer IN ('on_demand', 'spot')")


def coverage(con: duckdb.DuckDBPyConnection) -> dict:
    """Per cloud, over the open versions with an accelerator: rows, rows mapped, and the
    (instance type, accelerator name) pairs that are unmapped or ambiguous."""
    if not scalar(con, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'cloud_price'"):
        return {}
    out: dict = {}
    for cloud, n, mapped, unmapped, ambiguous in con.execute("""
            SELECT cloud, count(*), count(*) FILTER (WHERE accelerator_match = ?),
                   list(DISTINCT said ORDER BY said) FILTER (WHERE accelerator_match = ?),
                   list(DISTINCT said || ': ' || accelerator_candidates
                        ORDER BY said || ': ' || accelerator_candidates)
                       FILTER (WHERE accelerator_match = ?)
            FROM (SELECT *, instance_type || ' (' || accelerator_name AS said FROM cloud_price)
            WHERE valid_to IS NULL AND accelerator_match <> ?
            GROUP BY cloud ORDER BY cloud""", [CloudMatch.mapped, CloudMatch.unmapped,
                                                CloudMatch.ambiguous, CloudMatch.none]).fetchall():
        out[cloud] = {"rows_with_accelerator": n, "rows_mapped": mapped,
                      "unmapped": [f"{u})" for u in unmapped or []],
                      "ambiguous": [f"{a})" for a in ambiguous or []]}
    return {"cloud_accelerators_by_cloud": out, **azure_crosscheck(con)} if out else {}


def azure_crosscheck(con: duckdb.DuckDBPyConnection) -> dict:
    """How many catalog Azure prices had an Azure API price to compare with, and which disagree."""
    pairs = fetch_dicts(con, AZURE_PAIRS.format(batch="cloud_price"))
    if not pairs:
        return {}
    return {"cloud_azure_crosscheck": {
        "compared": len(pairs), "tolerance": AZURE_CROSSCHECK_TOLERANCE,
        "disagreements": [{k: v for k, v in p.items() if k not in ("id", "disagrees")}
                          for p in pairs if p["disagrees"]]}}
