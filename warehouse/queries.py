"""Read queries: every SQL the API and the CLI run against a snapshot. Routes stay thin: each
builds one query here (a ``ListQuery``) or calls one read function.

A list query names the relation and the Public model of its rows (``warehouse.public``): only
the model's columns are selected, filtered and sorted on. Identifiers are checked against those
columns; values are always bound parameters. Filters that need SQL beyond equality and ranges
are written here, never in a route.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass, field
from datetime import datetime

import duckdb
from pydantic import BaseModel

from warehouse import derived
from warehouse.db import fetch_dicts, scalar
from warehouse.exceptions import QueryError
from warehouse.public import (
    SOURCE_COLUMNS,
    BenchmarkRulePublic,
    ClaimCheckPublic,
    ClaimHistoryPublic,
    ClaimPublic,
    CostPublic,
    EnergyPublic,
    HardwareCatalogPublic,
    LatencyBoundPublic,
    MlperfResultPublic,
    ModelShapePublic,
    PerAcceleratorPublic,
    PriceCatalogPublic,
    ScenarioRatioPublic,
    SourceLink,
    SourceSnapshotPublic,
    TrendPublic,
)
from warehouse.schema import FACT_TABLES
from warehouse.vocabulary import (
    DESCRIPTIONS,
    Evidence,
    basis,
    model_family,
    normalise_model,
)


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
        parts = [f"list_contains(?::VARCHAR[], {f'lower({alias}.{c})' if fold else f'{alias}.{c}'})"
                 for c, fold, _ in self.terms]
        text = " OR ".join(parts)
        return (f"({text})" if len(parts) > 1 else text), [v for _, _, v in self.terms]


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

    @property
    def output_columns(self) -> list[str]:
        """The columns a row of this query has, in order: the relation's, then its source's."""
        names = list(self.public.model_fields)
        return [c for c in names if c not in SOURCE_COLUMNS] + [c for c in names if c in SOURCE_COLUMNS]


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
    for col, values in q.equals.items():
        if values and (col not in own or col in missing):
            raise QueryError(f"cannot filter on {col!r}", param=col)
    for col in [*q.contains, *q.ranges]:
        if col not in own:
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


def list_sql(con: duckdb.DuckDBPyConnection, q: ListQuery,
             have: frozenset[str] | None = None) -> ListSQL:
    """The SQL of a list query (parameters resolved against the snapshot). ``have`` is the
    relation's columns when known (``relation_columns``): a snapshot published before a column
    existed answers NULL for it instead of failing."""
    out_cols, own, missing = _filter_shape(q, have)
    with_source = issubclass(q.public, SourceLink)
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
        params.append("%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                      + "%")
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
    where_sql = (" WHERE " + " AND ".join(where)) if where else ""
    params = _bind(con, params)
    shape = _order_shape(q, out_cols, own, missing)
    order = [f"{quote_name(c)} {'DESC' if desc else 'ASC'} NULLS LAST" for c, desc in shape.order[:-1]]
    order.append(f"{quote_name(shape.order[-1][0])} ASC")
    inner = f"{base}{where_sql}"
    page = (f"SELECT {', '.join(quote_name(c) for c in shape.select)} "  # noqa: S608
            f"FROM ({inner}) ORDER BY {', '.join(order)} LIMIT ? OFFSET ?")
    return ListSQL(inner=inner, page=page, params=params, columns=shape.select)


def _total(con: duckdb.DuckDBPyConnection, q: ListQuery, s: ListSQL, page_rows: int) -> int:
    # A page that is not full also tells the total (the common case for a filtered dashboard
    # query); otherwise one count over the filtered rows.
    if page_rows < q.limit and (page_rows or q.offset == 0):
        return q.offset + page_rows
    return scalar(con, f"SELECT count(*) FROM ({s.inner})", s.params)  # noqa: S608


def run_list(con: duckdb.DuckDBPyConnection, q: ListQuery,
             have: frozenset[str] | None = None) -> tuple[int, list[dict], list[str]]:
    """Return (total rows matching, the page of rows as dicts, the column names)."""
    s = list_sql(con, q, have)
    rows = fetch_dicts(con, s.page, [*s.params, q.limit, q.offset])
    return _total(con, q, s, len(rows)), rows, s.columns


def run_list_arrow(con: duckdb.DuckDBPyConnection, q: ListQuery,
                   have: frozenset[str] | None = None):
    """Return (total rows matching, the page as an Arrow table typed by the database's
    schema, the column names): an all-NULL column keeps its type."""
    s = list_sql(con, q, have)
    table = con.sql(s.page, params=[*s.params, q.limit, q.offset]).to_arrow_table()
    return _total(con, q, s, table.num_rows), table, s.columns


def _tokens(text: str) -> frozenset[str]:
    return frozenset(t for t in re.split(r"[-_\s/()]+", text.lower()) if t)


def accelerator_aliases(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(accelerator id, lower-cased alias) of every alias this snapshot knows an id for."""
    return con.execute("SELECT DISTINCT accelerator_id, lower(alias) FROM accelerator_alias "
                       "WHERE accelerator_id IS NOT NULL").fetchall()


def resolve_accelerators(con: duckdb.DuckDBPyConnection, values: tuple[str, ...],
                         aliases: list[tuple[str, str]] | None = None) -> list[str]:
    """Accelerator ids for what people type, case-insensitively: an id (``nvidia-h200``), a
    spelling as published (``NVIDIA H200-SXM-141GB``, ``Standard_ND96isr_H200_v5``) or a short
    name whose words are all words of one id (``H200``, ``MI355X``, ``B200``). A short name
    that several ids contain is ambiguous (a QueryError listing them) unless exactly one id is
    that name and its vendor alone (``H200`` is ``nvidia-h200``, not ``nvidia-h200-nvl``). A
    value matching nothing is kept as given: the query then answers no rows, with a hint.
    ``aliases``: this snapshot's ``accelerator_aliases``, when already read."""
    rows = accelerator_aliases(con) if aliases is None else aliases
    ids = {i for i, _ in rows}
    by_alias: dict[str, set[str]] = {}
    for i, alias in rows:
        by_alias.setdefault(alias, set()).add(i)
    out: list[str] = []
    for value in values:
        key = value.strip().lower()
        if key in ids:
            out.append(key)
            continue
        if key in by_alias:
            out.extend(sorted(by_alias[key]))
            continue
        words = _tokens(key)
        candidates = sorted(i for i in ids if words and words <= _tokens(i))
        exact = [i for i in candidates if _tokens(i) - words <= {i.split("-")[0]}]
        if len(candidates) > 1 and len(exact) != 1:
            raise QueryError(f"accelerator {value!r} is ambiguous: it may be "
                             f"{', '.join(candidates)}; name one", param="accelerator")
        out.append(exact[0] if exact else candidates[0] if candidates else key)
    return out


def _bind(con: duckdb.DuckDBPyConnection, params: list) -> list:
    """Parameters with the ones resolved against the snapshot (``Accelerators``) resolved."""
    return [resolve_accelerators(con, p.values) if isinstance(p, Accelerators) else p
            for p in params]


def empty_hint(con: duckdb.DuckDBPyConnection, q: ListQuery) -> str | None:
    """Why a query matched nothing, for the envelope: the filter values this snapshot does not
    know (with the known ones), else the query's own note."""
    said: list[str] = []
    for k in q.known:
        known = [r[0] for r in con.execute(k.sql).fetchall() if r[0] is not None]
        folded = {str(v).lower() for v in known}
        missing = [v for v in k.values if v.lower() not in folded]
        if missing:
            close = difflib.get_close_matches(missing[0], [str(v) for v in known], n=3)
            shown = ", ".join(map(str, known[:25])) + (", …" if len(known) > 25 else "")
            said.append(f"no {k.param} {', '.join(repr(v) for v in missing)} in this snapshot"
                        + (f" (did you mean {' or '.join(map(repr, close))}?)" if close else "")
                        + f"; known: {shown or 'none'}")
    if said:
        return "; ".join(said)
    return q.note


# ----------------------------------------------------------------- list queries


@dataclass
class ResultFilter:
    """Filters every route over MLPerf results shares; values already checked against the
    vocabulary by the caller, model spellings normalised here."""

    round: list[str] = field(default_factory=list)
    division: list[str] = field(default_factory=list)
    organization: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)
    accelerator: list[str] = field(default_factory=list)
    availability: list[str] = field(default_factory=list)
    scenario: list[str] = field(default_factory=list)

    def _rounds(self) -> list[str]:
        return [r.strip().lower() if r.strip()[:1].lower() == "v" else "v" + r.strip()
                for r in self.round]  # 6.1 and V6.1 are v6.1

    def any_of(self) -> list[AnyOf]:
        """The filters as conditions. ``model`` matches a model id or a family (a family
        matches all its ids), spellings normalised."""
        out: list[AnyOf] = []
        rounds = self._rounds()
        for column, values in (("round", rounds), ("division", self.division),
                               ("availability", self.availability), ("scenario", self.scenario)):
            if values:
                out.append(AnyOf(((column, False, values),)))
        if self.organization:  # as people type them: nvidia finds NVIDIA
            out.append(AnyOf((("organization", True,
                               [v.strip().lower() for v in self.organization]),)))
        if self.accelerator:  # an id, a published spelling or a short name (H200)
            out.append(AnyOf((("accelerator_id", False, Accelerators(tuple(self.accelerator))),)))
        if self.model:
            models = [normalise_model(m) for m in self.model]
            out.append(AnyOf((("model_id", False, models), ("model_family", False, models))))
        return out

    def where(self, alias: str) -> tuple[str, list]:
        """``any_of`` as one SQL condition (``true`` when there is none) and its
        parameters, for SQL that filters a relation of its own."""
        conditions = [c.sql(alias) for c in self.any_of()]
        return (" AND ".join(sql for sql, _ in conditions) or "true",
                [p for _, ps in conditions for p in ps])

    def known(self) -> list[Known]:
        """The values to explain when nothing matches (models, organizations, rounds and
        accelerators this snapshot's results know)."""
        out = []
        if self.model:
            out.append(Known("model", tuple(normalise_model(m) for m in self.model),
                             "SELECT model_id FROM mlperf_result UNION "
                             "SELECT model_family FROM mlperf_result ORDER BY 1"))
        if self.organization:
            out.append(Known("organization", tuple(v.strip() for v in self.organization),
                             "SELECT DISTINCT organization FROM mlperf_result ORDER BY 1"))
        if self.round:
            out.append(Known("round", tuple(self._rounds()),
                             "SELECT DISTINCT round FROM mlperf_result ORDER BY 1"))
        if self.accelerator:
            out.append(Known("accelerator", tuple(v.strip() for v in self.accelerator),
                             "SELECT DISTINCT accelerator_id FROM mlperf_result UNION "
                             "SELECT alias FROM accelerator_alias WHERE kind = 'mlperf_name' "
                             "ORDER BY 1"))
        return out

    def note(self) -> str | None:
        """What to say when every value is known but nothing matches."""
        if not any(getattr(self, f.name) for f in dataclasses.fields(self)):
            return None
        if self.division == ["closed"] and self.availability == ["available"]:
            return ("no closed-division, available system matches; division and availability "
                    "default to closed + available here: add division=all&availability=all "
                    "to see every system")
        return "no row matches these filters together (each value is known in this snapshot)"

    def query(self, relation: str, public: type[BaseModel]) -> ListQuery:
        """A list query of ``relation`` with these filters."""
        return ListQuery(relation=relation, public=public, any_of=self.any_of(),
                         known=self.known(), note=self.note())


def results_query(f: ResultFilter, *, units: list[str], system: str | None,
                  min_result: float | None, max_result: float | None) -> ListQuery:
    """MLPerf result rows; ``accelerator`` matches an id or the name as published."""
    accs = f.accelerator
    q = dataclasses.replace(f, accelerator=[]).query("mlperf_result", MlperfResultPublic)
    q.equals["units"] = units
    if accs:  # also the name as published, for spellings no id maps
        q.any_of.append(AnyOf((("accelerator_id", False, Accelerators(tuple(accs))),
                               ("accelerator_model_name", True,
                                [a.strip().lower() for a in accs]))))
        q.known = f.known()
    if system:
        q.contains["system_name"] = system
    if min_result is not None or max_result is not None:
        q.ranges["result"] = (min_result, max_result)
    return q


def ratios_query(f: ResultFilter, *, include_flagged: bool, min_ratio: float | None,
                 max_ratio: float | None) -> ListQuery:
    """Server/Offline and Interactive/Offline ratios."""
    q = f.query("scenario_ratio", ScenarioRatioPublic)
    if not include_flagged:
        q.equals["flagged"] = [False]
    if min_ratio is not None or max_ratio is not None:
        q.ranges["ratio"] = (min_ratio, max_ratio)
    return q


def latency_query(f: ResultFilter, *, answer_tokens: int | None) -> ListQuery:
    """Latency bounds, with the time of an answer of ``answer_tokens`` when asked."""
    q = f.query("latency_bound", LatencyBoundPublic)
    q.subquery = ("SELECT *, ?::INTEGER AS answer_tokens, "
                  "(ttft_ms + (?::INTEGER - 1) * tpot_ms) / 1000.0 AS answer_seconds "
                  "FROM latency_bound", [answer_tokens, answer_tokens])
    return q


def per_accelerator_query(f: ResultFilter, *, units: list[str]) -> ListQuery:
    """Throughput results per accelerator (systems with accelerators only)."""
    q = f.query("result_per_accelerator", PerAcceleratorPublic)
    q.equals["units"] = units
    return q


def energy_query(f: ResultFilter, *, units: list[str]) -> ListQuery:
    """Work per joule of results with a power measurement."""
    q = f.query("energy_efficiency", EnergyPublic)
    q.equals["units"] = units
    return q


def trends_query(f: ResultFilter) -> ListQuery:
    """Per accelerator, model family, scenario and units: the best per-accelerator result of
    each round among the results ``f`` selects (its division and availability included), with
    the change against the previous round; oldest round first unless sorted."""
    where, params = f.where("result_per_accelerator")
    return ListQuery(relation="accelerator_trend", public=TrendPublic,
                     subquery=(derived.trend_sql(where), params),
                     sort=["accelerator_id", "model_family", "scenario", "units", "round"],
                     known=f.known(), note=f.note())


def costs_query(f: ResultFilter, *, bases: list[str], rates: list[float], region: str,
                offer: str, os: str, as_of: datetime | None,
                price_status: list[str]) -> ListQuery:
    """Cost per million tokens for every Tokens/s result, on the requested price bases.

    cost = rate x total_accelerators / (tokens/s x 3600) x 1e6. On the ``list_price`` basis the
    rate is the cheapest Azure price per accelerator-hour of the result's accelerator in the
    region/offer/OS valid at ``as_of`` (now by default); a result whose accelerator has no such
    price gets price_status 'no price' and a NULL cost, never zero. ``assumed`` rates are
    labelled ``assumption``. ``premium_vs_offline`` is this cost / the same system's Offline
    cost (= offline throughput / this throughput).
    """
    select = derived.COST_RESULT_COLUMNS
    parts: list[str] = []
    params: list[object] = []
    # The cost rows depend on the pricing parameters alone; the result filters apply outside,
    # so the same rows serve every filter (``keep``).
    if "list_price" in bases:
        valid, valid_params = "valid_to IS NULL", []
        if as_of is not None:
            valid = "valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)"
            valid_params = [as_of, as_of]
        ask = "SELECT lower(?::VARCHAR) AS region, ?::VARCHAR AS offer, ?::VARCHAR AS os"
        parts.append(derived.list_price_cost_sql(valid, ask=ask))
        params += [region, offer, os, *valid_params]
    if "assumed" in bases:
        parts.append(f"""
            SELECT r.id || ':assumed:' || CAST(a.rate AS VARCHAR) AS id, {select},
                   'assumed' AS price_basis, NULL::VARCHAR AS region,
                   NULL::VARCHAR AS offer, NULL::VARCHAR AS os,
                   NULL::VARCHAR AS reservation_term, NULL::VARCHAR AS sku,
                   NULL::VARCHAR AS price_id,
                   NULL::TIMESTAMPTZ AS price_valid_from,
                   a.rate AS rate_per_accelerator_hour, 'assumed' AS price_status,
                   {derived.COST_PER_MILLION.format(rate="a.rate")} AS cost_per_million_tokens,
                   ? AS basis
            FROM cost_input r CROSS JOIN (SELECT unnest(?::DOUBLE[]) AS rate) a""")
        params += [basis(Evidence.measured, Evidence.assumption), sorted(set(rates))]
    if not parts:
        raise QueryError("basis must be list_price and/or assumed", param="basis")
    sql = " UNION ALL BY NAME ".join(f"({p.strip()})" for p in parts)
    q = f.query("costs", CostPublic)
    q.subquery, q.keep = (sql, params), True
    q.equals["price_status"] = price_status
    return q


def claim_checks_query(*, round: list[str], vendor: list[str], evidence: list[str],
                       metric: list[str]) -> ListQuery:
    """Each claim next to the measured evidence, per round."""
    return ListQuery(relation="claim_check", public=ClaimCheckPublic, equals={
        "round": round, "vendor": vendor, "evidence": evidence, "metric": metric})


def claims_query(*, vendor: list[str], evidence: list[str], metric: list[str], model: list[str],
                 product: str | None) -> ListQuery:
    """Curated claims; ``model`` matches a claim's model or its family, spellings normalised
    as MLPerf's are."""
    q = ListQuery(relation="claim", public=ClaimPublic, equals={
        "vendor": vendor, "metric": metric, "evidence": evidence}, casefold=("vendor",))
    if model:
        models = [normalise_model(m) for m in model]
        q.any_of.append(AnyOf((("model", False, models), ("model_family", False, models))))
    if product:
        q.contains["product"] = product
    return q


def hardware_query(*, hardware: list[str], vendor: list[str], metric: list[str],
                   kind: list[str]) -> ListQuery:
    """Hardware specs with the hardware they describe."""
    return ListQuery(relation="hardware_catalog", public=HardwareCatalogPublic, equals={
        "hardware_id": hardware, "vendor": vendor, "metric": metric, "kind": kind},
        casefold=("hardware_id", "vendor"))


def models_query(*, illustrative: bool | None) -> ListQuery:
    """Model shapes, optionally only the illustrative ones (or only real models)."""
    q = ListQuery(relation="model_shape", public=ModelShapePublic)
    if illustrative is not None:
        q.equals["illustrative"] = [illustrative]
    return q


def rules_query(*, model: list[str], scenario: list[str], current: bool) -> ListQuery:
    """Latency limits; ``current`` keeps the latest rules document's only."""
    q = ListQuery(relation="benchmark_rule", public=BenchmarkRulePublic, equals={
        "model_family": [model_family(normalise_model(m)) for m in model], "scenario": scenario})
    if current:
        q.where.append((
            "t.source_snapshot_id = (SELECT id FROM source_snapshot WHERE kind = 'rules_document' "
            "ORDER BY fetched_at DESC LIMIT 1)", []))
    return q


def _valid_at(moment: datetime | None) -> tuple[str, list]:
    """Price versions valid at ``moment`` (default: now, i.e. current and still listed)."""
    if moment is None:
        return "t.valid_to IS NULL", []
    return "t.valid_from <= ? AND (t.valid_to IS NULL OR t.valid_to > ?)", [moment, moment]


def prices_query(*, sku: list[str], accelerator: list[str], region: list[str],
                 price_type: list[str], offer: list[str], os: list[str],
                 as_of: datetime | None) -> ListQuery:
    """Each price version valid at ``as_of``, with the accelerator its VM size rents."""
    q = ListQuery(relation="price_catalog", public=PriceCatalogPublic, equals={
        "arm_sku_name": sku, "arm_region_name": region,
        "price_type": price_type, "offer": offer, "os": os},
        casefold=("arm_sku_name", "arm_region_name"))
    q.where.append(_valid_at(as_of))
    if accelerator:
        q.any_of.append(AnyOf((("accelerator_id", False, Accelerators(tuple(accelerator))),)))
        q.known.append(Known("accelerator", tuple(accelerator),
                             "SELECT DISTINCT accelerator_id FROM price_catalog ORDER BY 1"))
    for param, values, column in (("sku", sku, "arm_sku_name"), ("region", region,
                                                                 "arm_region_name")):
        if values:
            q.known.append(Known(param, tuple(values), f"SELECT DISTINCT {column} "  # noqa: S608
                                 "FROM price_catalog ORDER BY 1"))
    return q


def price_history_query(*, sku: str, region: list[str], offer: list[str],
                        os: list[str]) -> ListQuery:
    """Every version of one VM size's prices, oldest first per price unless sorted."""
    return ListQuery(relation="price_catalog", public=PriceCatalogPublic, equals={
        "arm_sku_name": [sku], "arm_region_name": region, "offer": offer, "os": os},
        sort=["price_key", "valid_from"], casefold=("arm_sku_name", "arm_region_name"),
        known=[Known("sku", (sku,), "SELECT DISTINCT arm_sku_name FROM price_catalog "
                     "ORDER BY 1")])


def sources_query(*, source: list[str]) -> ListQuery:
    """Every source snapshot (fetched body)."""
    return ListQuery(relation="source_snapshot", public=SourceSnapshotPublic,
                     equals={"source": source})


# ----------------------------------------------------------------- item reads


def source_snapshot(con: duckdb.DuckDBPyConnection, snapshot_id: str) -> dict | None:
    """A source snapshot row and the count of rows parsed from it, per fact table."""
    rows = fetch_dicts(con, "SELECT * FROM source_snapshot WHERE id = ?", [snapshot_id])
    if not rows:
        return None
    counts = " UNION ALL ".join(
        f"SELECT '{t}', count(*) FROM {t} WHERE source_snapshot_id = $id" for t in FACT_TABLES)
    row = {k: rows[0][k] for k in SourceSnapshotPublic.model_fields}
    row["rows"] = dict(con.execute(counts, {"id": snapshot_id}).fetchall())  # noqa: S608
    return row


def _one(con: duckdb.DuckDBPyConnection, q: ListQuery) -> dict | None:
    _, rows, _ = run_list(con, q)
    return rows[0] if rows else None


def result_detail(con: duckdb.DuckDBPyConnection, result_id: str) -> dict | None:
    """One result, its source snapshot and links; None when there is no such result."""
    row = _one(con, ListQuery(relation="mlperf_result", public=MlperfResultPublic,
                              equals={"id": [result_id]}, limit=1))
    if row is None:
        return None
    return {"row": row, "source": source_snapshot(con, row["source_snapshot_id"]),
            "links": {"source": f"/v1/sources/{row['source_snapshot_id']}"}}


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
    accelerators, regions, and the evidence labels with their meanings."""
    return {
        "rounds": _distinct(con, "mlperf_result", "round"),
        "models": _distinct(con, "mlperf_result", "model_id"),
        "model_families": _distinct(con, "mlperf_result", "model_family"),
        "organizations": _distinct(con, "mlperf_result", "organization"),
        "scenarios": _distinct(con, "mlperf_result", "scenario"),
        "accelerators": _distinct(con, "mlperf_result", "accelerator_id"),
        "regions": _distinct(con, "azure_price", "arm_region_name"),
        "evidence": [{"label": k.value, "meaning": v} for k, v in DESCRIPTIONS.items()],
    }


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


def current_price(con: duckdb.DuckDBPyConnection, sku: str, region: str) -> dict | None:
    """The current on-demand Linux price of one VM size in one region, if listed."""
    rows = fetch_dicts(con, "SELECT hourly_price, source_snapshot_id FROM azure_price "
                       "WHERE arm_sku_name = ? AND arm_region_name = ? AND offer = 'on_demand' "
                       "AND os = 'linux' AND valid_to IS NULL", [sku, region])
    return rows[0] if rows else None
