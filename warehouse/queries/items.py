"""Reads of one item or one small answer: a result, a claim with its history, a source
snapshot, the validation results, the drop-down values (``meta``), current prices."""

from __future__ import annotations

import duckdb

from warehouse.model.public import (
    ClaimHistoryPublic,
    ClaimPublic,
    MlperfResultPublic,
    MlperfRevisionPublic,
    SourceSnapshotPublic,
)
from warehouse.model.schema import FACT_TABLES
from warehouse.model.vocabulary import DESCRIPTIONS, Revision
from warehouse.queries.listing import ListQuery, quote_name, relation_columns, run_list
from warehouse.storage.db import fetch_dicts


def source_snapshot(con: duckdb.DuckDBPyConnection, snapshot_id: str,
                    have: set[str] | None = None) -> dict | None:
    """A source snapshot row and the count of rows parsed from it, per fact table (0 for a
    table a snapshot published before it existed lacks; ``have``: its tables, when known)."""
    rows = fetch_dicts(con, "SELECT * FROM source_snapshot WHERE id = ?", [snapshot_id])
    if not rows:
        return None
    have = have if have is not None else _tables(con)
    counts = " UNION ALL ".join(
        f"SELECT '{t}', count(*) FROM {t} WHERE source_snapshot_id = $id"
        for t in FACT_TABLES if t in have)
    row = {k: rows[0][k] for k in SourceSnapshotPublic.model_fields}
    row["rows"] = dict.fromkeys(FACT_TABLES, 0) | dict(  # noqa: S608 - the code's own names
        con.execute(counts, {"id": snapshot_id}).fetchall())
    return row


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The tables of this snapshot (one published by an earlier version may lack newer ones)."""
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def _one(con: duckdb.DuckDBPyConnection, q: ListQuery) -> dict | None:
    _, rows, _ = run_list(con, q)
    return rows[0] if rows else None


def result_detail(con: duckdb.DuckDBPyConnection, result_id: str) -> dict | None:
    """One result, its source snapshot and its earlier versions, under this id and any id a
    newer parser renamed to it (a withdrawn result has ``row`` None and its history; a renamed
    one also ``renamed_to``, its id now); None when the id was never a result."""
    row = _one(con, ListQuery(relation="mlperf_result", public=MlperfResultPublic,
                              equals={"id": [result_id]}, limit=1))
    history: list[dict] = []
    have = _tables(con)
    if "mlperf_result_revision" in have:  # not in a snapshot from before it was kept
        columns = relation_columns(con, "mlperf_result_revision")
        ids = _renamed_to(con, result_id) if "renamed_to" in columns else [result_id]
        _, history, _ = run_list(con, ListQuery(
            relation="mlperf_result_revision", public=MlperfRevisionPublic,
            equals={"result_id": ids}, sort=["valid_to"], limit=1000), columns)
    if row is None and not history:
        return None
    own = [h for h in history if h["result_id"] == result_id]  # not an id renamed to it
    renamed = row is None and bool(own) and own[-1]["status"] == Revision.renamed
    return {"row": row, "source": row and source_snapshot(con, row["source_snapshot_id"], have),
            "history": history, "withdrawn": row is None and not renamed,
            **({"renamed_to": own[-1]["renamed_to"]} if renamed else {})}


def _renamed_to(con: duckdb.DuckDBPyConnection, result_id: str) -> list[str]:
    """``result_id`` and every id renamed to it, directly or through others (a -> b -> c), in
    one query (``UNION`` stops at an id seen before: a rename back, a -> b -> a)."""
    return [r[0] for r in con.execute(
        "WITH RECURSIVE ids(id) AS (SELECT ?::VARCHAR UNION SELECT m.result_id FROM "
        "mlperf_result_revision m JOIN ids ON m.renamed_to = ids.id) SELECT id FROM ids",
        [result_id]).fetchall()]


def claim_detail(con: duckdb.DuckDBPyConnection, claim_id: str) -> dict | None:
    """One claim, the file snapshot it was read from and its earlier versions (a withdrawn
    claim has ``row`` None and its history); None when the id was never a claim."""
    row = _one(con, ListQuery(relation="claim", public=ClaimPublic, equals={"id": [claim_id]},
                              limit=1))
    _, history, _ = run_list(con, ListQuery(
        relation="claim_history", public=ClaimHistoryPublic, equals={"claim_id": [claim_id]},
        sort=["valid_to"], limit=1000))
    if row is None and not history:
        return None
    return {"row": row, "source": row and source_snapshot(con, row["source_snapshot_id"]),
            "history": history, "withdrawn": row is None}


def validation_results(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Validation results stored in the snapshot (of the run that published it)."""
    return fetch_dicts(con, "SELECT * FROM validation_result ORDER BY severity, expectation")


def _distinct(con: duckdb.DuckDBPyConnection, relation: str, column: str) -> list:
    return [r[0] for r in con.execute(
        f"SELECT DISTINCT {quote_name(column)} FROM {quote_name(relation)} "  # noqa: S608 - fixed names
        f"WHERE {quote_name(column)} IS NOT NULL ORDER BY 1").fetchall()]


def meta(con: duckdb.DuckDBPyConnection) -> dict:
    """Values for dashboards' drop-downs: rounds, models, organizations, scenarios,
    accelerators, regions, the input/output lengths observations were run at (InferenceX and
    self-measured), and the evidence labels with their meanings."""
    return {
        "rounds": _distinct(con, "mlperf_result", "round"),
        "models": _distinct(con, "mlperf_result", "model_id"),
        "model_families": _distinct(con, "mlperf_result", "model_family"),
        "organizations": _distinct(con, "mlperf_result", "organization"),
        "scenarios": _distinct(con, "mlperf_result", "scenario"),
        "accelerators": _distinct(con, "mlperf_result", "accelerator_id"),
        "regions": _distinct(con, "azure_price", "arm_region_name"),
        "observation_lengths": [r[0] for r in con.execute(
            "SELECT DISTINCT isl || '/' || osl FROM observation WHERE current "
            "AND isl IS NOT NULL AND osl IS NOT NULL ORDER BY 1").fetchall()],
        "evidence": [{"label": k.value, "meaning": v} for k, v in DESCRIPTIONS.items()],
    }


# The values a price place takes in this snapshot: every provider that prices something, and
# Azure's regions (lower case).
PRICE_PLACES = {
    "provider": "SELECT DISTINCT provider FROM provider_price ORDER BY 1",
    "region": "SELECT DISTINCT lower(region) FROM provider_price WHERE provider = 'azure' "
              "ORDER BY 1"}


def price_places(con: duckdb.DuckDBPyConnection, param: str) -> list[str]:
    """The providers (``param`` provider) or Azure regions (region) this snapshot prices at."""
    return [r[0] for r in con.execute(PRICE_PLACES[param]).fetchall()]


def current_price(con: duckdb.DuckDBPyConnection, sku: str, region: str) -> dict | None:
    """The current on-demand Linux price of one Azure VM size in one region (names as
    /v1/prices matches them, case aside), if listed, with the accelerator and how many the VM
    rents (``price_catalog``'s mapping; NULL when unmapped)."""
    rows = fetch_dicts(con, "SELECT arm_sku_name, hourly_price, accelerator_id, accelerators, "
                       "source_snapshot_id FROM price_catalog WHERE price_source = "
                       "'azure_prices' AND lower(arm_sku_name) = lower(?) AND "
                       "lower(arm_region_name) = lower(?) AND offer = 'on_demand' AND "
                       "os = 'linux' AND valid_to IS NULL", [sku, region])
    return rows[0] if rows else None
