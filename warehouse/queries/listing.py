"""List queries as SQL: a ``ListQuery`` (relation, Public model, filters, order, page) becomes
one parameterised DuckDB query. Only the Public model's columns are selected, filtered and
sorted on; identifiers are checked against them and values are always bound parameters."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

import duckdb
from pydantic import BaseModel

from warehouse.exceptions import QueryError
from warehouse.model.public import (
    SOURCE_COLUMNS,
    SourceLink,
)
from warehouse.queries.accelerator_names import resolve_accelerators
from warehouse.storage.db import fetch_dicts, parsed, scalar


@dataclass(frozen=True)
class Accelerators:
    """A bound parameter resolved when the query runs, against the snapshot's alias table: the
    accelerator ids for what people type (an id, a published spelling or a short name such as
    ``H200``; see ``resolve_accelerators``)."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class Known:
    """Filter values to explain when a query matches nothing: the parameter, the values as
    given (already normalised the way the filter compares them) and the SQL that lists the
    values this snapshot knows."""

    param: str
    values: tuple[str, ...]
    sql: str


@dataclass(frozen=True)
class AnyOf:
    """A filter condition: the row's value in one of ``terms``' columns (lowercased when the
    term folds case) is one of that term's values."""

    terms: tuple[tuple[str, bool, object], ...]  # (column, fold case, values or Accelerators)

    def sql(self, alias: str) -> tuple[str, list]:
        """The condition and its bound parameters: one a value (``IN``, which DuckDB
        plans quicker than one list parameter), or for accelerators one list resolved against
        the snapshot when the query runs (``_bind``)."""
        parts, params = [], []
        for c, fold, values in self.terms:
            col = f"lower({alias}.{c})" if fold else f"{alias}.{c}"
            if isinstance(values, Accelerators):
                parts.append(f"list_contains(?::VARCHAR[], {col})")
                params.append(values)
            else:
                values = list(values)  # type: ignore[call-overload]
                parts.append(f"{col} IN ({', '.join('?' * len(values))})" if values else "FALSE")
                params.extend(values)
        text = " OR ".join(parts)
        return (f"({text})" if len(parts) > 1 else text), params


DEFAULT_FILTERS = ("division", "availability")  # closed + available unless asked otherwise


@dataclass
class ListQuery:
    """A filtered, sorted, paginated read of one relation, returning ``public``'s columns."""

    relation: str
    public: type[BaseModel]
    equals: dict[str, list] = field(default_factory=dict)      # column IN (values)
    contains: dict[str, str] = field(default_factory=dict)     # column ILIKE %value%
    ranges: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    sort: list[str] = field(default_factory=list)              # "col" or "-col"
    columns: list[str] | None = None
    limit: int = 100
    offset: int = 0
    # Written in this module only: a condition over ``t`` (the relation), and SQL read instead
    # of the relation (a parameterised subquery); both with bound parameters.
    where: list[tuple[str, list]] = field(default_factory=list)
    any_of: list[AnyOf] = field(default_factory=list)  # conditions on ``t``, all must hold
    subquery: tuple[str, list] | None = None
    # The subquery's rows depend on the snapshot and its own parameters only (every filter
    # applies outside it), so a caller may compute them once and read them as a relation.
    keep: bool = False
    casefold: tuple[str, ...] = ()  # equals on these columns ignores case (names people type)
    known: list[Known] = field(default_factory=list)  # explained when nothing matches
    note: str | None = None  # said when nothing matches, e.g. a default filter that applied
    defaulted: bool = False  # the note says that default filters (closed + available) applied
    # Read from a serving table (``relation`` is then its name): the output columns are its
    # own (no source join) and a page is its rows' positions (``pos``) alone.
    served: bool = False
    sources: tuple[str, ...] = ()  # the sources the relation's rows come from
    any_source: bool = False  # rows come from any one of ``sources`` (else from each)
    wider: ListQuery | None = None  # without the default filters, when not just fewer any_of
    caveat: Caveat | None = None  # rows a non-empty answer explains (``caveat_hint``)

    def widened(self) -> ListQuery:
        """This query without the default filters (division, availability)."""
        return self.wider or dataclasses.replace(self, any_of=[
            a for a in self.any_of if a.terms[0][0] not in DEFAULT_FILTERS])

    @property
    def output_columns(self) -> list[str]:
        """The columns a row of this query has, in order: the relation's, then its source's."""
        return list(_output_columns(self.public))


@cache  # one per response model, asked by every list request
def _output_columns(public: type[BaseModel]) -> tuple[str, ...]:
    names = list(public.model_fields)
    return (*(c for c in names if c not in SOURCE_COLUMNS), *(c for c in names if c in SOURCE_COLUMNS))


def quote_name(name: str) -> str:
    """An identifier quoted for SQL."""
    return '"' + name.replace('"', '""') + '"'


def relation_columns(con: duckdb.DuckDBPyConnection, relation: str) -> frozenset[str]:
    """The columns a table or view of this snapshot has."""
    return frozenset(r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [relation]).fetchall())


@dataclass
class ListSQL:
    """A list query as SQL: the filtered rows (``inner``), the page of them, their bound
    parameters and the columns a page row has."""

    inner: str
    page: str
    params: list
    columns: list[str]
    base: str = ""  # the relation's rows with the output columns, unfiltered
    order: str = ""  # the tie-break order (the serving table's own)
    counted: str = ""  # a served page with the count of the filtered rows on each row
    own_order: bool = False  # served in the table's own order: ``page`` is every match's pos


@dataclass
class _Shape:
    """A list query's order and columns checked against its relation, without SQL: the sort
    keys as (column, descending) with the tie-break last, and the columns selected."""

    order: list[tuple[str, bool]]
    select: list[str]


def _filter_shape(q: ListQuery, have: frozenset[str] | None) -> tuple[list[str], list[str], set[str]]:
    """The output, own and missing columns, with the filters' columns checked (the errors a
    filter on a column the relation lacks gets)."""
    out_cols = q.output_columns
    with_source = issubclass(q.public, SourceLink)
    own = [c for c in out_cols if not (with_source and c in SOURCE_COLUMNS)]
    missing = set() if have is None or q.subquery is not None else set(own) - have
    for col in [*(c for c, values in q.equals.items() if values), *q.contains, *q.ranges]:
        if col not in own or col in missing:
            raise QueryError(f"cannot filter on {col!r}", param=col)
    return out_cols, own, missing


def _order_shape(q: ListQuery, out_cols: list[str], own: list[str],
                 missing: set[str]) -> _Shape:
    """The sort keys and the selected columns checked (after the filters and their values)."""
    order: list[tuple[str, bool]] = []
    for key in q.sort:
        col = key.lstrip("-+")
        if col not in out_cols:
            raise QueryError(f"cannot sort on {col!r}; sortable columns: {', '.join(out_cols)}",
                             param="sort")
        order.append((col, key.startswith("-")))
    tiebreak = "id" if "id" in out_cols else out_cols[0]
    order.append((tiebreak, False))
    if q.columns:
        bad = [c for c in q.columns if c not in out_cols]
        if bad:
            raise QueryError(f"unknown column(s) {', '.join(bad)}; available: "
                             f"{', '.join(out_cols)}", param="columns")
    return _Shape(order=order, select=q.columns or out_cols)


def contains_pattern(text: str) -> str:
    """An ILIKE pattern (``ESCAPE '\\'``) matching ``text`` anywhere, its wildcards literal."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def list_sql(con: duckdb.DuckDBPyConnection, q: ListQuery,
             have: frozenset[str] | None = None) -> ListSQL:
    """The SQL of a list query (parameters resolved against the snapshot). ``have`` is the
    relation's columns when known (``relation_columns``): a snapshot published before a column
    existed answers NULL for it instead of failing."""
    out_cols, own, missing = _filter_shape(q, have)
    with_source = issubclass(q.public, SourceLink) and not q.served
    params: list[object] = []
    if q.subquery is not None:
        sub_sql, sub_params = q.subquery
        source = f"({sub_sql})"
        params.extend(sub_params)
    else:
        source = quote_name(q.relation)
    picked = ", ".join(f"NULL AS {quote_name(c)}" if c in missing else f"t.{quote_name(c)}" for c in own)
    base = f"SELECT {picked} FROM {source} t"  # noqa: S608 - names from the Public model
    if with_source:
        base = (f"SELECT {picked}, s.source AS source_name, s.url AS source_snapshot_url, "  # noqa: S608
                "s.fetched_at AS source_fetched_at, s.sha256 AS source_sha256 "
                f"FROM {source} t LEFT JOIN source_snapshot s ON s.id = t.source_snapshot_id")
    where_sql = _where(q, params)
    params = _bind(con, params)
    shape = _order_shape(q, out_cols, own, missing)
    order = [f"{quote_name(c)} {'DESC' if desc else 'ASC'} NULLS LAST" for c, desc in shape.order[:-1]]
    order.append(f"{quote_name(shape.order[-1][0])} ASC")
    inner = f"{base}{where_sql}"
    counted = ""
    own_order = q.served and all(c == shape.order[-1][0] and not desc for c, desc in shape.order)
    if q.served:  # one flat query on the serving table: no subquery to plan
        inner = f"SELECT t.pos FROM {source} t{where_sql}"  # noqa: S608
    if own_order:
        # The serving table's own order (its tie-break, as it was written): DuckDB keeps a
        # table's row order through WHERE (its documented order preservation), so no sort:
        # the position of every matching row, of which ``run_list_json`` slices the page.
        page = inner
    elif q.served:
        tail = f"{where_sql} ORDER BY {', '.join(order)} LIMIT ? OFFSET ?"
        page = f"SELECT t.pos FROM {source} t{tail}"  # noqa: S608
        counted = f"SELECT t.pos, count(*) OVER () FROM {source} t{tail}"  # noqa: S608
    else:
        page = (f"SELECT {', '.join(quote_name(c) for c in shape.select)} FROM ({inner}) "  # noqa: S608
                f"ORDER BY {', '.join(order)} LIMIT ? OFFSET ?")
    return ListSQL(inner=inner, page=page, params=params, columns=shape.select,
                   base=base, order=", ".join(order[-1:]), counted=counted, own_order=own_order)


def _where(q: ListQuery, params: list[object]) -> str:
    """The WHERE clause of ``q``'s filters (`` WHERE …`` or empty), its values appended to
    ``params``."""
    where: list[str] = []
    for col, values in q.equals.items():
        if not values:
            continue
        if col in q.casefold:
            where.append(f"lower(t.{quote_name(col)}) IN ({', '.join('?' * len(values))})")
            params.extend(str(v).lower() for v in values)
        else:
            where.append(f"t.{quote_name(col)} IN ({', '.join('?' * len(values))})")
            params.extend(values)
    for col, text in q.contains.items():
        where.append(f"t.{quote_name(col)} ILIKE ? ESCAPE '\\'")
        params.append(contains_pattern(text))
    for col, (lo, hi) in q.ranges.items():
        if lo is not None:
            where.append(f"t.{quote_name(col)} >= ?")
            params.append(lo)
        if hi is not None:
            where.append(f"t.{quote_name(col)} <= ?")
            params.append(hi)
    for sql, p in [cond.sql("t") for cond in q.any_of] + q.where:
        where.append(sql)
        params.extend(p)
    return (" WHERE " + " AND ".join(where)) if where else ""


def _total(con: duckdb.DuckDBPyConnection, q: ListQuery, s: ListSQL, page_rows: int) -> int:
    # A page that is not full also tells the total (the common case for a filtered dashboard
    # query); otherwise one count over the filtered rows.
    if page_rows < q.limit and (page_rows or q.offset == 0):
        return q.offset + page_rows
    return scalar(con, parsed(f"SELECT count(*) FROM ({s.inner})"), s.params)  # noqa: S608


def run_list(con: duckdb.DuckDBPyConnection, q: ListQuery,
             have: frozenset[str] | None = None) -> tuple[int, list[dict], list[str]]:
    """Return (total rows matching, the page of rows as dicts, the column names)."""
    s = list_sql(con, q, have)
    rows = fetch_dicts(con, parsed(s.page), [*s.params, q.limit, q.offset])
    return _total(con, q, s, len(rows)), rows, s.columns


def serving_source(con: duckdb.DuckDBPyConnection, q: ListQuery,
                   have: frozenset[str] | None = None) -> tuple[str, list, list[str], str]:
    """What a serving table of ``q``'s relation holds: the unfiltered rows with the output
    columns (SQL and parameters), the columns, and its tie-break order."""
    plain = dataclasses.replace(q, equals={}, contains={}, ranges={}, where=[], any_of=[],
                                sort=[], columns=None)
    s = list_sql(con, plain, have)
    base_params = list(q.subquery[1]) if q.subquery is not None else []
    return s.base, base_params, s.columns, s.order


# A page in the serving table's own order (no sort asked) is a slice of every matching
# position, read in that order in one pass that also tells the total (in process at 100x: a
# full costs page 0.80 ms, against 0.52 for the page and 0.84 for its count; unfiltered
# results, 47,066 positions, 0.70 against 0.42 + 0.69). Any other page of a serving table of
# more than COUNTED_FROM_ROWS rows carries the count of the filtered rows on each of its rows
# (``ListSQL.counted``), so a full page needs no second query for its total; below it a
# filtered page is seldom full, and the plain page is quicker.
COUNTED_FROM_ROWS = 2_000


def run_list_json(con: duckdb.DuckDBPyConnection, q: ListQuery, table: str,
                  encoded: Sequence[str]) -> tuple[int, list[str]]:
    """A page of ``q`` read from its serving ``table``: (total rows matching, each row's JSON
    in order). The table returns the page's positions (``pos``); ``encoded`` is each row's
    JSON by position, encoded once per snapshot (``Opened.serving``), so the query reads the
    columns it filters and sorts on and nothing else."""
    served = dataclasses.replace(q, relation=table, subquery=None, served=True, columns=None)
    s = list_sql(con, served)
    if s.own_order:  # as a NumPy array: the page and the total in one pass, no count apart
        every = con.execute(parsed(s.page), s.params).fetchnumpy()["pos"]
        return len(every), [encoded[p] for p in every[q.offset:q.offset + q.limit].tolist()]
    if s.counted and len(encoded) > COUNTED_FROM_ROWS:  # each row carries the total
        found = con.execute(parsed(s.counted), [*s.params, q.limit, q.offset]).fetchall()
        if found:
            return found[0][1], [encoded[r[0]] for r in found]
        return _total(con, q, s, 0), []
    found = con.execute(parsed(s.page), [*s.params, q.limit, q.offset]).fetchall()
    page = [encoded[r[0]] for r in found]
    return _total(con, q, s, len(page)), page


def run_list_arrow(con: duckdb.DuckDBPyConnection, q: ListQuery,
                   have: frozenset[str] | None = None):
    """Return (total rows matching, the page as an Arrow table typed by the database's
    schema, the column names): an all-NULL column keeps its type."""
    s = list_sql(con, q, have)
    table = con.sql(s.page, params=[*s.params, q.limit, q.offset]).to_arrow_table()
    return _total(con, q, s, table.num_rows), table, s.columns


def _bind(con: duckdb.DuckDBPyConnection, params: list) -> list:
    """Parameters with the ones resolved against the snapshot (``Accelerators``) resolved."""
    return [resolve_accelerators(con, p.values) if isinstance(p, Accelerators) else p
            for p in params]


@dataclass(frozen=True)
class Caveat:
    """Rows of a non-empty answer that need a word: those matching ``where`` (SQL over the
    rows' columns, written in code, never from a request), said by ``message`` ("{n}": how
    many; "{why}": ``why``, or why ``source`` has no rows when the snapshot has none of it)."""

    where: str
    message: str
    why: str
    source: str


def caveat_hint(con: duckdb.DuckDBPyConnection, q: ListQuery, have: frozenset[str] | None,
                loaded: frozenset[str], absent: Callable[[str], str]) -> str | None:
    """The hint of a non-empty answer: ``q.caveat`` said when some matching rows need it."""
    if q.caveat is None:
        return None
    s = list_sql(con, dataclasses.replace(q, columns=None, served=False), have)
    n = scalar(con, f"SELECT count(*) FROM ({s.inner}) WHERE {q.caveat.where}",  # noqa: S608
               s.params)
    if not n:
        return None
    c = q.caveat
    return c.message.replace("{n}", f"{n:,}").replace(
        "{why}", c.why if c.source in loaded else absent(c.source))


@dataclass(frozen=True)
class Empty:
    """Why a list answered no rows: ``reason``, and whether rows exist outside the default
    filters (then, and only then, the caller suggests widening them)."""

    reason: str
    outside_defaults: bool = False


def empty_hint(con: duckdb.DuckDBPyConnection, q: ListQuery, loaded: frozenset[str],
               absent: Callable[[str], str],
               failed: Callable[[str], dict[str, str]] = lambda source: {}) -> Empty:
    """Why a query matched nothing, checked in this order: a source of its rows has no rows
    in this snapshot (``loaded``: the sources that have; ``absent`` says why: never loaded,
    switched off); a filter value this snapshot does not know (with the known ones, and the
    source's part of that name that failed in the last refresh, from ``failed``: part -> why);
    rows that exist outside the default filters; else the query's own note."""
    missing_sources = [s for s in q.sources if s not in loaded]
    if missing_sources and (not q.any_source or len(missing_sources) == len(q.sources)):
        return Empty("no rows: " + "; ".join(absent(s) for s in missing_sources))
    said: list[str] = []
    for k in q.known:
        known = [r[0] for r in con.execute(k.sql).fetchall() if r[0] is not None]
        folded = {str(v).lower() for v in known}
        missing = [v for v in k.values if not _is_known(con, k.param, v, folded)]
        parts = {part.lower(): (source, part, why) for source in q.sources
                 for part, why in failed(source).items()}
        for value in missing:
            source, part, why = parts.get(f"{k.param} {value}".lower(), (None, None, None))
            if source:
                said.append(f"no {k.param} {value!r} in this snapshot: the {source} source's "
                            f"{part} failed in the last refresh ({why}); see /healthz")
        missing = [v for v in missing if f"{k.param} {v}".lower() not in parts]
        if missing:
            close = difflib.get_close_matches(missing[0], [str(v) for v in known], n=3)
            shown = ", ".join(map(str, known[:25])) + (", …" if len(known) > 25 else "")
            said.append(f"no {k.param} {', '.join(repr(v) for v in missing)} in this snapshot"
                        + (f" (did you mean {' or '.join(map(repr, close))}?)" if close else "")
                        + f"; known: {shown or 'none'}")
    if said:
        return Empty("; ".join(said))
    if q.defaulted:
        wide = q.widened()  # a snapshot older than a column answers NULL for it, as pages do
        s = list_sql(con, wide, None if wide.subquery is not None
                     else relation_columns(con, wide.relation))
        outside = bool(scalar(con, f"SELECT count(*) FROM ({s.inner})", s.params))  # noqa: S608
        if outside:
            return Empty(q.note or "", outside_defaults=True)
        return Empty("no system matches these filters in any division or availability")
    return Empty(q.note or "no rows in this snapshot")


def _is_known(con: duckdb.DuckDBPyConnection, param: str, value: str, folded: set[str]) -> bool:
    """A filter value the snapshot knows: as given, or (an accelerator) as what it resolves to,
    e.g. the short name ``MI300X``."""
    if value.lower() in folded:
        return True
    if param != "accelerator":
        return False
    try:
        return any(i in folded for i in resolve_accelerators(con, (value,)))
    except QueryError:  # ambiguous: several ids are known
        return True
