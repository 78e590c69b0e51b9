"""Read queries the API (and the CLI) run against a snapshot. SQL lives here, not in routes.

Identifiers (relation, columns, sort keys) are checked against the relation's real columns;
values are always bound parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from warehouse.db import fetch_dicts, scalar
from warehouse.exceptions import QueryError

# Relations the API may read, with how their rows link to their source snapshot.
SOURCE_COLUMNS = ("source_name", "source_url", "source_fetched_at", "source_sha256")


@dataclass
class ListQuery:
    """A filtered, sorted, paginated read of one relation."""

    relation: str
    equals: dict[str, list] = field(default_factory=dict)      # column IN (values)
    contains: dict[str, str] = field(default_factory=dict)     # column ILIKE %value%
    ranges: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    sort: list[str] = field(default_factory=list)              # "col" or "-col"
    columns: list[str] | None = None
    limit: int = 100
    offset: int = 0
    with_source: bool = False
    extra_where: list[tuple[str, list]] = field(default_factory=list)  # trusted SQL + params
    subquery: tuple[str, list] | None = None  # trusted SQL + params read instead of `relation`


def relation_columns(con: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    """Column names of a table or view, in order."""
    return [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "ORDER BY ordinal_position", [relation]).fetchall()]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def run_list(con: duckdb.DuckDBPyConnection, q: ListQuery,
             cache: dict | None = None) -> tuple[int, list[dict], list[str]]:
    """Return (total rows matching, the page of rows, the column names). ``cache`` keeps a
    relation's column list between calls on the same (immutable) snapshot."""
    sub_params: list[object] = []
    if q.subquery is not None:
        sub_sql, sub_params = q.subquery
        source = f"({sub_sql})"
        cache_key = ("subquery", q.relation)
        known = cache.get(cache_key) if cache is not None else None
        if known is None:
            known = [d[0] for d in con.execute(f"SELECT * FROM {source} LIMIT 0", sub_params).description]  # noqa: S608
    else:
        source = _quote(q.relation)
        cache_key = ("relation", q.relation)
        known = cache.get(cache_key) if cache is not None else None
        if known is None:
            known = relation_columns(con, q.relation)
    if cache is not None and known:
        cache[cache_key] = known
    if not known:
        raise QueryError(f"{q.relation} is not in this snapshot")
    # The relation exists (it has columns); every identifier below is checked against `known`.
    base = f"SELECT t.* FROM {source} t"  # noqa: S608
    out_cols = list(known)
    if q.with_source and "source_snapshot_id" in known:
        base = (f"SELECT t.*, s.source AS source_name, s.url AS source_url, "  # noqa: S608
                f"s.fetched_at AS source_fetched_at, s.sha256 AS source_sha256 "
                f"FROM {source} t LEFT JOIN source_snapshot s "
                f"ON s.id = t.source_snapshot_id")
        out_cols += list(SOURCE_COLUMNS)
    where: list[str] = []
    params: list[object] = list(sub_params)
    for col, values in q.equals.items():
        if not values:
            continue
        if col not in known:
            raise QueryError(f"cannot filter on {col!r}", param=col)
        if values:
            where.append(f"t.{_quote(col)} IN ({', '.join('?' * len(values))})")
            params.extend(values)
    for col, text in q.contains.items():
        if col not in known:
            raise QueryError(f"cannot filter on {col!r}", param=col)
        where.append(f"t.{_quote(col)} ILIKE ?")
        params.append("%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                      + "%")
        where[-1] += " ESCAPE '\\'"
    for col, (lo, hi) in q.ranges.items():
        if col not in known:
            raise QueryError(f"cannot filter on {col!r}", param=col)
        if lo is not None:
            where.append(f"t.{_quote(col)} >= ?")
            params.append(lo)
        if hi is not None:
            where.append(f"t.{_quote(col)} <= ?")
            params.append(hi)
    for sql, p in q.extra_where:
        where.append(sql)
        params.extend(p)
    where_sql = (" WHERE " + " AND ".join(where)) if where else ""
    order: list[str] = []
    for key in q.sort:
        desc = key.startswith("-")
        col = key.lstrip("-+")
        if col not in out_cols:
            raise QueryError(f"cannot sort on {col!r}; sortable columns: {', '.join(out_cols)}",
                             param="sort")
        order.append(f"{_quote(col)} {'DESC' if desc else 'ASC'} NULLS LAST")
    tiebreak = "id" if "id" in out_cols else out_cols[0]
    order.append(f"{_quote(tiebreak)} ASC")
    if q.columns:
        bad = [c for c in q.columns if c not in out_cols]
        if bad:
            raise QueryError(f"unknown column(s) {', '.join(bad)}; available: "
                             f"{', '.join(out_cols)}", param="columns")
        select_cols = q.columns
    else:
        select_cols = out_cols
    inner = f"{base}{where_sql}"
    # The page first; a page that is not full also tells the total (the common case for a
    # filtered dashboard query), otherwise one count over the filtered rows.
    sql = (f"SELECT {', '.join(_quote(c) for c in select_cols)} "  # noqa: S608
           f"FROM ({inner}) ORDER BY {', '.join(order)} LIMIT ? OFFSET ?")
    rows = fetch_dicts(con, sql, [*params, q.limit, q.offset])
    if len(rows) < q.limit and (rows or q.offset == 0):
        total = q.offset + len(rows)
    else:
        total = scalar(con, f"SELECT count(*) FROM ({inner})", params)  # noqa: S608
    return total, rows, select_cols


def get_one(con: duckdb.DuckDBPyConnection, relation: str, key: str, value: str,
            with_source: bool = True) -> dict | None:
    """One row by key, with its source columns when the relation has a source snapshot."""
    total, rows, _ = run_list(con, ListQuery(relation=relation, equals={key: [value]},
                                             limit=1, with_source=with_source))
    return rows[0] if rows else None


def source_snapshot(con: duckdb.DuckDBPyConnection, snapshot_id: str) -> dict | None:
    """A source snapshot row and the count of rows parsed from it, per table."""
    rows = fetch_dicts(con, "SELECT * FROM source_snapshot WHERE id = ?", [snapshot_id])
    if not rows:
        return None
    row = rows[0]
    from warehouse.schema import FACT_TABLES

    row["rows"] = {t: scalar(con, f"SELECT count(*) FROM {t} WHERE source_snapshot_id = ?",  # noqa: S608
                             [snapshot_id]) for t in FACT_TABLES}
    return row


def validation_results(con: duckdb.DuckDBPyConnection, run_id: str | None = None) -> list[dict]:
    """Validation results stored in the snapshot (of the run that published it)."""
    sql = "SELECT * FROM validation_result"
    params: list[object] = []
    if run_id:
        sql += " WHERE run_id = ?"
        params.append(run_id)
    return fetch_dicts(con, sql + " ORDER BY severity, expectation", params)


def distinct_values(con: duckdb.DuckDBPyConnection, relation: str, column: str) -> list:
    """Sorted distinct non-null values of one column (for dashboards' drop-downs)."""
    if column not in relation_columns(con, relation):
        raise QueryError(f"{relation} has no column {column!r}")
    return [r[0] for r in con.execute(
        f"SELECT DISTINCT {_quote(column)} FROM {_quote(relation)} "  # noqa: S608
        f"WHERE {_quote(column)} IS NOT NULL ORDER BY 1").fetchall()]


def accelerators(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Accelerator ids with their MLPerf spellings and the Azure VM sizes that rent them."""
    return fetch_dicts(con, """
        SELECT accelerator_id AS id, any_value(vendor) AS vendor,
               list(alias ORDER BY alias) FILTER (WHERE kind = 'mlperf_name') AS mlperf_names,
               list({'sku': alias, 'accelerators': count} ORDER BY alias)
                   FILTER (WHERE kind = 'azure_sku') AS azure_skus,
               (SELECT count(*) FROM mlperf_result r WHERE r.accelerator_id = a.accelerator_id)
                   AS mlperf_results
        FROM accelerator_alias a WHERE accelerator_id IS NOT NULL
        GROUP BY accelerator_id ORDER BY accelerator_id""")


def cost_query(*, bases: list[str], rates: list[float], region: str, offer: str, os: str,
               as_of: object | None) -> tuple[str, list]:
    """Cost per million tokens for every Tokens/s result, on the requested price bases.

    cost = rate x total_accelerators / (tokens/s x 3600) x 1e6. On the ``list_price`` basis the
    rate is the cheapest Azure price per accelerator-hour of the result's accelerator in the
    region/offer/OS valid at ``as_of`` (now by default); a result whose accelerator has no such
    price gets price_status 'no price' and a NULL cost, never zero. ``assumed`` rates are
    labelled ``assumption``. ``premium_vs_offline`` is this cost / the same system's Offline
    cost (= offline throughput / this throughput).
    """
    select = """r.id AS result_id, r.round, r.division, r.organization, r.platform,
        r.system_name, r.model_id, r.model_family, r.scenario, r.result, r.units,
        r.total_accelerators, r.accelerator_id, r.availability,
        1.0 / pr.ratio AS premium_vs_offline"""
    joins = "LEFT JOIN scenario_ratio pr ON pr.other_result_id = r.id AND NOT pr.flagged"
    where = "WHERE NOT r.is_power AND r.units = 'Tokens/s' AND r.total_accelerators > 0"
    parts: list[str] = []
    params: list[object] = []
    if "list_price" in bases:
        valid, valid_params = "valid_to IS NULL", []
        if as_of is not None:
            valid = "valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)"
            valid_params = [as_of, as_of]
        parts.append(f"""
            WITH p AS (
                SELECT accelerator_id, min(price_per_accelerator_hour) AS rate,
                       arg_min(arm_sku_name, price_per_accelerator_hour) AS sku,
                       arg_min(price_id, price_per_accelerator_hour) AS price_id
                FROM accelerator_hour_price
                WHERE arm_region_name = ? AND offer = ? AND os = ? AND {valid}
                GROUP BY accelerator_id)
            SELECT r.id || ':list_price' AS id, {select},
                   'list_price' AS price_basis, ? AS region, p.sku, p.price_id,
                   p.rate AS rate_per_accelerator_hour,
                   CASE WHEN p.rate IS NULL THEN 'no price' ELSE 'priced' END AS price_status,
                   p.rate * r.total_accelerators / (r.result * 3600.0) * 1e6
                       AS cost_per_million_tokens,
                   'derived: measured + list_price' AS basis
            FROM mlperf_result r LEFT JOIN p ON p.accelerator_id = r.accelerator_id {joins}
            {where}""")
        params += [region, offer, os, *valid_params, region]
    if "assumed" in bases:
        parts.append(f"""
            SELECT r.id || ':assumed:' || CAST(a.rate AS VARCHAR) AS id, {select},
                   'assumed' AS price_basis, NULL AS region, NULL AS sku, NULL AS price_id,
                   a.rate AS rate_per_accelerator_hour, 'assumed' AS price_status,
                   a.rate * r.total_accelerators / (r.result * 3600.0) * 1e6
                       AS cost_per_million_tokens,
                   'derived: measured + assumption' AS basis
            FROM mlperf_result r CROSS JOIN (SELECT unnest(?::DOUBLE[]) AS rate) a {joins}
            {where}""")
        params.append(rates)
    if not parts:
        raise QueryError("basis must be list_price and/or assumed", param="basis")
    return " UNION ALL BY NAME ".join(f"({p.strip()})" for p in parts), params
