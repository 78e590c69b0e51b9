"""Parameters every list endpoint shares (pagination, sort, columns, format) and the one helper
that runs a ``ListQuery`` and renders it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.responses import Response

from api.responses import (
    Format,
    cache_headers,
    item_response,
    list_response,
    mark_cacheable,
    not_modified,
    pick_format,
)
from api.snapshot import Opened, SnapshotReader
from warehouse.exceptions import QueryError
from warehouse.export import for_parquet
from warehouse.queries import (
    ListQuery,
    ResultFilter,
    empty_hint,
    relation_columns,
    run_list,
    run_list_arrow,
)
from warehouse.settings import Settings
from warehouse.vocabulary import (
    AVAILABILITY,
    DIVISIONS,
    OFFERS,
    OPERATING_SYSTEMS,
    PRICE_BASES,
    PRICE_TYPES,
    SCENARIOS,
    Evidence,
)


@dataclass
class Page:
    """Pagination, sorting, column selection and format of a list request."""

    limit: int
    offset: int
    sort: list[str]
    columns: list[str] | None
    format: Format | None


def page(
    request: Request,
    limit: Annotated[int, Query(ge=1, description="Rows per page (at most the server's "
                                "api_max_limit, 1000 by default).")] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000, description="Rows to skip.")] = 0,
    sort: Annotated[list[str] | None, Query(description="Sort keys, repeatable or "
                    "comma-separated; '-' for descending, e.g. sort=-ratio.")] = None,
    columns: Annotated[list[str] | None, Query(description="Columns to return, repeatable or "
                       "comma-separated (default: all).")] = None,
    format: Annotated[Format | None, Query(description="json (default), csv, ndjson or "
                      "parquet; Accept: text/csv etc. works too.")] = None,
) -> Page:
    """Parse the shared list parameters; cap the limit with a clear message."""
    settings: Settings = request.app.state.settings
    if limit > settings.api_max_limit:
        raise QueryError(f"limit must be at most {settings.api_max_limit} "
                         f"(got {limit}); page with offset or the next link", param="limit")
    return Page(limit=limit, offset=offset, sort=_split(sort) or [],
                columns=_split(columns), format=format)


PageDep = Annotated[Page, Depends(page)]


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def comma_list(values: object) -> object:
    """A typed repeatable parameter's raw values with comma lists split (``rate=5,10`` is
    ``rate=5&rate=10``), for a ``BeforeValidator``: parsing then checks each item."""
    if isinstance(values, list):
        return [v.strip() for item in values
                for v in (item.split(",") if isinstance(item, str) else [item])]
    return values


def listed(values: list[str] | None) -> list[str]:
    """A repeatable filter (``model=a&model=b`` or ``model=a,b``) as a list."""
    return _split(values) or []


def accepted_params(dependant) -> set[str]:
    """The query parameters a route (its dependency tree) takes."""
    names = {p.alias for p in dependant.query_params}
    for sub in dependant.dependencies:
        names |= accepted_params(sub)
    return names


def strict_params(request: Request) -> None:
    """Every route's guard: a query parameter the route does not take is a 422 naming it and
    the accepted ones (with the closest, when one is close), never silently ignored."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None or not request.query_params or not getattr(route, "include_in_schema",
                                                                        True):
        return  # the explorer page keeps its own state in the query string
    accepted = getattr(route, "_accepted_params", None)
    if accepted is None:  # once per route: its parameters never change
        accepted = accepted_params(dependant)
        route._accepted_params = accepted  # type: ignore[union-attr]
    unknown = [k for k in dict.fromkeys(request.query_params.keys()) if k not in accepted]
    if unknown:
        import difflib

        name = unknown[0]
        close = difflib.get_close_matches(name, sorted(accepted), n=1, cutoff=0.6) or sorted(
            (a for a in accepted if name.startswith(a) or a.startswith(name)), key=len)[-1:]
        raise QueryError(f"unknown parameter {name!r}" + (f" (did you mean {close[0]!r}?)"
                                                         if close else "")
                         + f"; accepted: {', '.join(sorted(accepted)) or 'none'}", param=name)


def reader(request: Request) -> SnapshotReader:
    return request.app.state.reader


@contextmanager
def snapshot(request: Request, at: datetime | None = None) -> Iterator[tuple[Opened, Any]]:
    """The snapshot to answer from and a cursor on it, closed when the block ends."""
    opened, con = reader(request).cursor(at)
    try:
        yield opened, con
    finally:
        con.close()


def settings_of(request: Request) -> Settings:
    return request.app.state.settings


def render_list(request: Request, q: ListQuery, p: Page, at: datetime | None = None) -> Response:
    """Run a list query on the current snapshot (or the one current at ``at``) and render it
    in the requested format. Its answer depends on the snapshot and the request alone, so the
    response cache may keep it."""
    mark_cacheable(request)
    q.limit, q.offset, q.columns = p.limit, p.offset, p.columns
    q.sort = p.sort or q.sort  # a query may have a default order
    max_age = settings_of(request).api_cache_max_age
    opened = reader(request).get() if at is None else reader(request).published_at(at)
    headers = cache_headers(request, opened, max_age)
    cached = not_modified(request, headers)
    if cached is not None:  # the snapshot is immutable: the ETag alone answers a revalidation
        return cached
    arrow = None
    have: frozenset[str] | None = None
    try:
        kept = q.keep and q.subquery is not None  # rows the same for every filter: kept
        if kept:
            name, have = opened.kept(*q.subquery)  # type: ignore[misc]
            q = dataclasses.replace(q, relation=name, subquery=None)
        con = opened.local_cursor()  # after ``kept``: the kept rows are registered on it
        if not kept:
            key = ("columns", q.relation)
            if q.subquery is None and key not in opened.cache:
                opened.cache[key] = relation_columns(con, q.relation)
            have = opened.cache.get(key)
        fmt = pick_format(request, p.format)
        rows: list[dict] = []
        if fmt is Format.parquet:  # typed by the database's schema
            total, table, cols = run_list_arrow(con, q, have)
            arrow = for_parquet(table, {n: f.description or "" for n, f in
                                        q.public.model_fields.items()})
        else:
            total, rows, cols = run_list(con, q, have)
        hint = None
        if total == 0:
            hint = (_advice(empty_hint(con, q), q) if opened.id is not None else
                    "no snapshot is published yet: run `perfledger refresh` (see /healthz)")
    except BaseException:  # a failed query may leave the cursor busy: the next one is fresh
        opened.drop_local_cursor()
        raise
    return list_response(request, opened, total=total, rows=rows, columns=cols, limit=p.limit,
                         offset=p.offset, fmt=fmt, max_age=max_age, hint=hint, arrow=arrow,
                         headers=headers)


def _advice(hint: str | None, q: ListQuery) -> str | None:
    """A hint with what to send to see more, where the query's own defaults kept rows out."""
    if hint is not None and hint == q.note and q.defaulted:
        return hint + ": add division=all&availability=all to see every system"
    return hint


def render_item(request: Request, opened: Opened, payload: dict, *, memo: bool = False) -> Response:
    """Render one object with the cache headers; ``memo`` lets the response cache keep it
    (only for payloads computed from the snapshot and the query alone, never the run journal)."""
    if memo:
        mark_cacheable(request)
    return item_response(request, opened, payload, settings_of(request).api_cache_max_age)


AS_OF_RANGE = (datetime(1970, 1, 1, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC))


def parse_as_of(value: str | None) -> datetime | None:
    """``YYYY-MM-DD`` (the end of that day, UTC) or an ISO 8601 timestamp between 1970-01-01 and
    9999-12-30; 422 otherwise, naming the accepted range."""
    if value is None:
        return None
    accepted = (f"as_of: {value!r} is not a date (YYYY-MM-DD) or ISO 8601 timestamp from "
                f"{AS_OF_RANGE[0].date()} to {AS_OF_RANGE[1].date()}")
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            moment = datetime.combine(day + timedelta(days=1), time(), UTC) \
                - timedelta(microseconds=1)
        else:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            moment = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError):
        raise QueryError(accepted, param="as_of") from None
    if not AS_OF_RANGE[0] <= moment <= AS_OF_RANGE[1] + timedelta(days=1):
        raise QueryError(accepted, param="as_of")
    return moment


def check_choice(name: str, values: list[str], allowed: tuple[str, ...] | list[str]) -> list[str]:
    """Normalise values against a closed vocabulary set (case-insensitive); 422 naming the
    accepted ones."""
    by_key = {v.lower(): v for v in allowed}
    out = []
    for v in values:
        key = v.strip().lower()
        if key not in by_key:
            raise QueryError(f"{name}: {v!r} is not one of {', '.join(sorted(allowed))}",
                             param=name)
        out.append(by_key[key])
    return out


# The closed sets API parameters accept: the vocabulary's, nothing spelled here.
CHOICES: dict[str, tuple[str, ...]] = {
    "division": DIVISIONS, "availability": AVAILABILITY, "scenario": SCENARIOS,
    "offer": OFFERS, "os": OPERATING_SYSTEMS, "type": PRICE_TYPES, "basis": PRICE_BASES,
    "evidence": tuple(e.value for e in Evidence),
}


def choice(name: str, values: list[str] | None) -> list[str]:
    """A repeatable parameter checked against its vocabulary set (``CHOICES[name]``)."""
    return check_choice(name, listed(values), CHOICES[name])


AsOfSnapshot = Annotated[str | None, Query(
    description="Answer from the snapshot that was current at this date (YYYY-MM-DD, end of day "
                "UTC) or timestamp; default: the current one.")]


def buyer_choice(name: str, values: list[str] | None, default: str) -> list[str]:
    """A division/availability filter of a route that ranks systems: ``default`` (what a buyer
    can get) when absent, everything for ``all``."""
    given = listed(values)
    if not given:
        return [default]
    if any(v.strip().lower() == "all" for v in given):
        return []
    return check_choice(name, given, CHOICES[name])


def result_filters(round, division, organization, model, accelerator, availability,
                   scenario=None) -> ResultFilter:
    """The filters every route over MLPerf results shares, checked against the vocabulary."""
    return ResultFilter(
        round=listed(round), division=choice("division", division),
        organization=listed(organization), model=listed(model), accelerator=listed(accelerator),
        availability=choice("availability", availability), scenario=choice("scenario", scenario))


def ranked_filters(round, division, organization, model, accelerator, availability,
                   scenario=None) -> ResultFilter:
    """``result_filters`` for a route that ranks systems: division and availability default to
    what a buyer can get (closed, available); ``all`` selects every system."""
    f = result_filters(round, None, organization, model, accelerator, None, scenario)
    f.division = buyer_choice("division", division, "closed")
    f.availability = buyer_choice("availability", availability, "available")
    return f
