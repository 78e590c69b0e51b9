"""Price versions in SQL: a work table of freshly read rows against a versioned table.

Both price sources (``azure_price``, ``cloud_price``) keep every version of a price: a change
closes the open version (``valid_to``) and opens a new one, a price that disappears is closed
and marked unlisted, one seen again unchanged gets its ``last_seen_at`` moved. The work table
has the versioned table's columns plus ``ord`` (read order: the first row of a repeated
``price_key`` wins), and ``valid_from`` holding the start its source proposes (Azure: the
effective start date; the SkyPilot catalog: when observed, or the commit's date).

Tables replaced whole by their source (claims, a round's MLPerf results) keep what a new file
changed or dropped beside them instead (``superseded``, ``history_row``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime

import duckdb

from warehouse.storage.db import fetch_dicts

_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")


def version(con: duckdb.DuckDBPyConnection, table: str, work: str, *, same: tuple[str, ...],
            observed: datetime, scope: str = "TRUE", scope_params: dict | None = None,
            ordinal_ids: bool = False) -> tuple[dict[str, int], int]:
    """Version ``table`` from ``work`` (then dropped): (changes by kind, versions delisted).

    ``same`` names the columns whose values make two versions equal (compared NULL-safely).
    ``scope`` (SQL over ``table``'s columns, parameters in ``scope_params``) limits which open
    versions a missing key closes: the part of the table this work table covers. ``table``,
    ``work`` and the column names are this code's own, never user input. A version's id is
    the row's content id with its start (epoch microseconds), or with ``ordinal_ids`` with how
    many versions its key had before (a start that is the time observed differs per run)."""
    if not all(_IDENT.match(x) for x in (table, work, *same)):
        raise ValueError(f"not an identifier of this code's: {(table, work, same)}")
    params = {"observed": observed, **(scope_params or {})}
    cols = ", ".join(same)
    current = ", ".join(f"c.{c}" for c in same)
    read = ", ".join(f"n.{c}" for c in same)
    # Per key: same as its open version, changed, or new. A changed price opens at its proposed
    # start when that is later than the open version's start, else when observed; a new (or
    # re-listed) key opens at its proposed start, but never before its last version closed.
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _diff AS
        SELECT n.ord, n.price_key, c.id AS open_id,
               CASE WHEN c.id IS NULL THEN 'new'
                    WHEN ({current}) IS NOT DISTINCT FROM ({read}) THEN 'same'
                    ELSE 'changed' END AS change,
               coalesce(p.versions, 0) AS versions,
               CASE WHEN c.id IS NULL THEN greatest(n.valid_from, coalesce(p.last_end, n.valid_from))
                    WHEN n.valid_from > c.valid_from THEN n.valid_from
                    ELSE $observed END AS valid_from
        FROM (SELECT ord, price_key, valid_from, {cols} FROM {work}
              QUALIFY row_number() OVER (PARTITION BY price_key ORDER BY ord) = 1) n
        LEFT JOIN {table} c ON c.price_key = n.price_key AND c.valid_to IS NULL
        LEFT JOIN (SELECT price_key, max(valid_to) AS last_end, count(*) AS versions
                   FROM {table} GROUP BY price_key) p ON p.price_key = n.price_key
    """, {"observed": observed})  # noqa: S608 - identifiers checked above, values bound
    counts = dict(con.execute("SELECT change, count(*) FROM _diff GROUP BY 1").fetchall())
    # An UPDATE answers with the number of rows it changed.
    [gone] = con.execute(
        f"UPDATE {table} SET valid_to = $observed, listed = false WHERE valid_to IS NULL "  # noqa: S608
        f"AND ({scope}) AND price_key NOT IN (SELECT price_key FROM _diff)",
        params).fetchone() or (0,)
    con.execute(f"UPDATE {table} SET valid_to = d.valid_from, listed = true FROM _diff d "  # noqa: S608
                f"WHERE {table}.id = d.open_id AND d.change = 'changed'")
    con.execute(f"UPDATE {table} SET last_seen_at = $observed WHERE id IN "  # noqa: S608
                "(SELECT open_id FROM _diff WHERE change = 'same')",
                {"observed": observed})
    stamp = "d.versions" if ordinal_ids else "epoch_us(d.valid_from)"
    con.execute(f"""
        INSERT INTO {table} BY NAME
        SELECT n.* EXCLUDE (ord) REPLACE (
                   left(sha256(n.id || chr(31) || {stamp}::VARCHAR), 16) AS id,
                   d.valid_from AS valid_from)
        FROM {work} n JOIN _diff d USING (ord)
        WHERE d.change IN ('new', 'changed')
    """)  # noqa: S608
    con.execute(f"DROP TABLE {work}")
    con.execute("DROP TABLE _diff")
    return counts, gone


def superseded(con: duckdb.DuckDBPyConnection, sql: str, params: list, new: dict[str, dict],
               compared: tuple[str, ...]) -> Iterator[tuple[dict, datetime | None, bool]]:
    """The stored rows (``sql`` selects them, with ``_fetched``: when the bytes they came
    from were fetched) that the ``new`` rows (by id) change in a ``compared`` column, or no
    longer have: (the row as it was, its fetch time, whether it was withdrawn)."""
    for old in fetch_dicts(con, sql, params):
        fresh = new.get(old["id"])
        if fresh is not None and all(str(fresh.get(k)) == str(old[k]) for k in compared):
            continue
        yield old, old.pop("_fetched"), fresh is None


def history_row(old: dict, fetched: datetime | None, at: datetime, status: str) -> dict:
    """The columns every kept earlier version has: its id (the row's and when it was
    replaced), status, validity (from its fetch to ``at``), evidence, the whole row as JSON
    and the snapshot it came from."""
    return {"id": f"{old['id']}@{at.isoformat()}", "status": status, "valid_from": fetched,
            "valid_to": at, "evidence": old["evidence"],
            "version": json.dumps(old, default=str), "source_snapshot_id": old["source_snapshot_id"]}
