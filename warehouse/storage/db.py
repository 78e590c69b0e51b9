"""Small DuckDB helpers shared by loaders and queries: bulk insert, row fetching, and the
guards of a connection that only reads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import duckdb

# DuckDB's own guards for a connection that only reads a snapshot (``perfledger sql``, the
# API's connections): no file or network access besides the databases already open (so no
# COPY ... TO, EXPORT DATABASE, ATTACH, read_csv of another file), no extension installed or
# loaded behind the statement's back, and the configuration locked last, so that no SET or
# PRAGMA (profiling_output, enable_external_access itself) can undo them.
READ_ONLY_GUARDS: dict[str, bool] = {
    "enable_external_access": False, "autoinstall_known_extensions": False,
    "autoload_known_extensions": False, "allow_community_extensions": False,
    "lock_configuration": True}

# The same guards as SQL, for a connection that must attach its files first (the API's
# in-memory database) and for the duckdb shell (``-cmd``).
GUARD_SQL = "; ".join(f"SET {k} = {str(v).lower()}" for k, v in READ_ONLY_GUARDS.items())


def open_read_only(path: Path, **config: str | int | float) -> duckdb.DuckDBPyConnection:
    """A connection to the DuckDB file at ``path`` that can read it and nothing else."""
    return duckdb.connect(str(path), read_only=True, config={**config, **READ_ONLY_GUARDS})


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Iterable[dict],
                batch: int = 50_000) -> int:
    """Bulk-insert dicts into a table through Arrow (no row-by-row inserts); returns the count.

    The table's own columns (as DuckDB describes it, in order, with their types) say what is
    read from each row: a key missing from a row is NULL, a key the table lacks is ignored.
    Rows are consumed lazily, ``batch`` at a time.
    """
    import pyarrow as pa  # only a refresh that writes needs Arrow

    described = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? "
        "ORDER BY column_index", [table]).fetchall()
    if not described:
        raise ValueError(f"insert_rows: no table {table!r}")
    names = [r[0] for r in described]
    types = dict(described)
    total = 0
    chunk: list[dict] = []

    def flush() -> None:
        nonlocal total
        if not chunk:
            return
        # Column by column over the table's names: Table.from_pylist would take the names
        # from the first row alone and drop a key that only later rows carry.
        arrow = pa.table({n: [row.get(n) for row in chunk] for n in names})
        con.register("_perfledger_batch", arrow)
        select = ", ".join(f'CAST("{n}" AS {types[n]}) AS "{n}"' for n in names)
        con.execute(f'INSERT INTO "{table}" BY NAME SELECT {select} FROM _perfledger_batch')  # noqa: S608 - names from the catalog
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
    rows = con.execute(sql, params or []).fetchall()  # fetched whole: the cursor stays free
    return rows[0][0] if rows else None


def loaded_sources(con: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """The sources that have rows in this snapshot (a fetched body on record)."""
    return frozenset(r[0] for r in con.execute(
        "SELECT DISTINCT source FROM source_snapshot").fetchall())
