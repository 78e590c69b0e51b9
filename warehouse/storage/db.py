"""Small DuckDB helpers shared by loaders and queries: bulk insert, row fetching, the kept
parse of a query's text, and the guards of a connection that only reads."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache
from itertools import islice
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


# An in-memory connection never spills to disk: DuckDB's default temp_directory for one is
# ``.tmp`` in the current directory, outside the data dir (and a reader writes nothing). A
# query past memory fails instead.
NO_SPILL: dict[str, str | bool | int | float | list[str]] = {"temp_directory": ""}


def open_read_only(path: Path, **config: str | int | float) -> duckdb.DuckDBPyConnection:
    """A connection to the DuckDB file at ``path`` that can read it and nothing else."""
    return duckdb.connect(str(path), read_only=True, config={**config, **READ_ONLY_GUARDS})


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Iterable[dict],
                batch: int = 50_000) -> int:
    """Bulk-insert dicts into a table through Arrow (no row-by-row inserts); returns the count.

    A key missing from a row is NULL, a key the table lacks is ignored (``insert_columns``).
    Rows are consumed lazily, ``batch`` at a time.
    """
    names = list(_columns(con, table))
    total = 0
    remaining = iter(rows)
    while chunk := list(islice(remaining, batch)):
        # Column by column over the table's names: Table.from_pylist would take the names
        # from the first row alone and drop a key that only later rows carry.
        total += insert_columns(con, table, {n: [r.get(n) for r in chunk] for n in names})
    return total


def insert_columns(con: duckdb.DuckDBPyConnection, table: str,
                   columns: dict[str, list]) -> int:
    """Bulk-insert equal-length value lists (column name -> values) through Arrow, each cast
    to the table's type (as DuckDB describes the table): a column the table lacks is ignored,
    one ``columns`` lacks is NULL. Columns hold a large file's rows in a fraction of the
    memory a dict per row takes. Returns the count."""
    import pyarrow as pa  # only a refresh that writes needs Arrow

    if pa.default_memory_pool().backend_name != "system":
        # Arrow's default pool (mimalloc) keeps what a batch freed for later batches: a full
        # refresh peaked about 45 MB higher through it (RSS, 4 runs); the system allocator
        # gives it back, for the rest of this process (a writer: the API never inserts)
        pa.set_memory_pool(pa.system_memory_pool())
    types = _columns(con, table)
    given = [n for n in types if n in columns]
    if not given:
        return 0
    con.register("_perfledger_batch", pa.table({n: columns[n] for n in given}))
    select = ", ".join(f'CAST("{n}" AS {types[n]}) AS "{n}"' for n in given)
    con.execute(f'INSERT INTO "{table}" BY NAME SELECT {select} FROM _perfledger_batch')  # noqa: S608 - names from the catalog
    con.unregister("_perfledger_batch")
    return len(columns[given[0]])


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, str]:
    """The table's columns and their types, in order, as DuckDB describes it."""
    described = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? "
        "ORDER BY column_index", [table]).fetchall()
    if not described:
        raise ValueError(f"insert_rows: no table {table!r}")
    return dict(described)


# The API asks the same few shapes of SQL again and again (its values bound apart): DuckDB's
# parse of each text up to PARSE_KEPT_CHARS long is kept, the last PARSE_KEPT of them, and every
# execution copies it instead of parsing again (the figures: README, Performance). A parse of
# a text that long holds about 70 KB (13 KB for a filtered page's 150-450 characters), so at
# most about 20 MB per process; a longer text (a subquery inlined whole) is parsed each time.
# The parses come from DuckDB's default settings on one in-memory connection that never runs
# a query: a parse names no database, so any connection binds it; only a connection that
# changes a setting read while parsing (``integer_division``, say; the API's change none)
# must execute its text.
PARSE_KEPT = 256
PARSE_KEPT_CHARS = 2_000
_PARSING = threading.Lock()  # a connection serves one thread at a time


def parsed(sql: str) -> str | duckdb.Statement:
    """DuckDB's kept parse of ``sql`` (one statement); the text itself when it is longer than
    ``PARSE_KEPT_CHARS``. Either is what ``con.execute`` takes."""
    return _parse(sql) if len(sql) <= PARSE_KEPT_CHARS else sql


@cache
def _parser() -> duckdb.DuckDBPyConnection:
    return duckdb.connect(config={**NO_SPILL, "threads": 1})


@lru_cache(maxsize=PARSE_KEPT)
def _parse(sql: str) -> duckdb.Statement:
    with _PARSING:
        statements = _parser().extract_statements(sql)
    if len(statements) != 1:
        raise duckdb.InvalidInputException(f"one SQL statement expected, not {len(statements)}")
    return statements[0]


def fetch_dicts(con: duckdb.DuckDBPyConnection, sql: str | duckdb.Statement,
                params: Sequence[object] | None = None) -> list[dict]:
    """Run a query with bound parameters and return rows as dicts."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def scalar(con: duckdb.DuckDBPyConnection, sql: str | duckdb.Statement, params: Sequence[object] | None = None):
    """The first column of the first row of a query (None when there is no row)."""
    rows = con.execute(sql, params or []).fetchall()  # fetched whole: the cursor stays free
    return rows[0][0] if rows else None


def loaded_sources(con: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """The sources that have rows in this snapshot (a fetched body on record)."""
    return frozenset(r[0] for r in con.execute(
        "SELECT DISTINCT source FROM source_snapshot").fetchall())
