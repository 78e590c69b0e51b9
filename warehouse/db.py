"""Small DuckDB helpers shared by loaders and queries: bulk insert, row fetching."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import duckdb
import pyarrow as pa

from warehouse.schema import columns


def insert_rows(con: duckdb.DuckDBPyConnection, model, rows: Iterable[dict],
                batch: int = 50_000, *, table: str | None = None,
                extra: Sequence[str] = ()) -> int:
    """Bulk-insert dicts into a schema table through Arrow (no row-by-row inserts).

    Columns are matched by name; a key missing from a row is NULL. ``table`` names another
    table shaped like the model (a temporary work table) with ``extra`` columns after the
    model's. Rows are consumed lazily, ``batch`` at a time.
    """
    table = table or model.__tablename__
    names = columns(model) + list(extra)
    types = {r[0]: r[1] for r in con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?",
        [table]).fetchall()}
    total = 0
    chunk: list[dict] = []

    def flush() -> None:
        nonlocal total
        if not chunk:
            return
        arrow = pa.Table.from_pylist(chunk)
        for n in names:  # a key no row carries becomes a NULL column
            if n not in arrow.column_names:
                arrow = arrow.append_column(n, pa.nulls(len(chunk)))
        arrow = arrow.select(names)
        con.register("_perfledger_batch", arrow)
        select = ", ".join(f'CAST("{n}" AS {types[n]}) AS "{n}"' for n in names)
        con.execute(f'INSERT INTO "{table}" BY NAME SELECT {select} FROM _perfledger_batch')  # noqa: S608 - names from the schema
        con.unregister("_perfledger_batch")
        total += len(chunk)
        chunk.clear()

    for row in rows:
        chunk.append(row)
        if len(chunk) >= batch:
            flush()
    flush()
    return total


def fetch_dicts(con: duckdb.DuckDBPyConnection, sql: str,
                params: Sequence[object] | None = None) -> list[dict]:
    """Run a query with bound parameters and return rows as dicts."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] | None = None):
    """The first column of the first row of a query (None when there is no row)."""
    row = con.execute(sql, params or []).fetchone()
    return row[0] if row else None
