"""How the catalog's GPU rows map to accelerator ids, per cloud (run after every refresh)."""

from __future__ import annotations

import duckdb

from warehouse.model.vocabulary import CloudMatch
from warehouse.storage.db import scalar


def coverage(con: duckdb.DuckDBPyConnection) -> dict:
    """Per cloud, over the open versions with an accelerator: rows, rows mapped, and the
    (instance type, accelerator name) pairs that are unmapped or ambiguous."""
    if not scalar(con, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'cloud_price'"):
        return {}
    out: dict = {}
    for cloud, n, mapped, unmapped, ambiguous in con.execute("""
            SELECT cloud, count(*), count(*) FILTER (WHERE accelerator_match = ?),
                   list(DISTINCT instance_type || ' (' || accelerator_name || ')' ORDER BY 1)
                       FILTER (WHERE accelerator_match = ?),
                   list(DISTINCT instance_type || ' (' || accelerator_name || ': '
                        || accelerator_candidates || ')' ORDER BY 1)
                       FILTER (WHERE accelerator_match = ?)
            FROM cloud_price WHERE valid_to IS NULL AND accelerator_match <> ?
            GROUP BY cloud ORDER BY cloud""", [CloudMatch.mapped, CloudMatch.unmapped,
                                                CloudMatch.ambiguous, CloudMatch.none]).fetchall():
        out[cloud] = {"rows_with_accelerator": n, "rows_mapped": mapped,
                      "unmapped": unmapped or [], "ambiguous": ambiguous or []}
    return {"cloud_accelerators_by_cloud": out} if out else {}
