"""What every route shares: the snapshot to answer from (and a cursor on it), the one helper
that runs a ``ListQuery`` and renders it, item rendering, and ``as_of`` parsing."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from api.params import PageParams
from api.responses import (
    Format,
    cache_headers,
    encode_row,
    item_response,
    list_response,
    mark_cacheable,
    not_modified,
    pick_format,
)
from api.snapshot import Opened, SnapshotReader
from warehouse.exceptions import QueryError
from warehouse.quality import health
from warehouse.queries import (
    Empty,
    ListQuery,
    caveat_hint,
    empty_hint,
    list_sql,
    relation_columns,
    run_list,
    run_list_arrow,
    run_list_json,
    serving_source,
)
from warehouse.settings import Settings
from warehouse.storage.export import for_parquet


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


def render_list(request: Request, q: ListQuery, params: PageParams,
                at: datetime | None = None) -> Response:
    """Run a list query on the current snapshot (or the one current at ``at``) with the page
    ``params`` ask for, and render it in the requested format. Its answer depends on the
    snapshot and the request alone, so the response cache may keep it."""
    p = params.page(settings_of(request).api_max_limit)
    mark_cacheable(request)
    q.limit, q.offset, q.columns = p.limit, p.offset, p.columns
    q.sort = p.sort or q.sort  # a query may have a default order
    max_age = settings_of(request).api_cache_max_age
    opened = reader(request).get() if at is None else reader(request).published_at(at)
    headers = cache_headers(request, opened, max_age)
    cached = not_modified(request, headers)
    if cached is not None:  # the snapshot is immutable: the ETag alone answers a revalidation
        list_sql(opened.local_cursor(), q)  # of a valid request (RFC 9110 13.2.1): else a 422
        return cached
    arrow = None
    have: frozenset[str] | None = None
    try:
        # rows the same for every filter: kept once asked again (``Opened.keeps``)
        kept = q.keep and q.subquery is not None and opened.keeps(*q.subquery)
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
        encoded: list[str] | None = None
        if fmt is Format.parquet:  # typed by the database's schema
            total, table, cols = run_list_arrow(con, q, have)
            arrow = for_parquet(table, {n: f.description or "" for n, f in
                                        q.public.model_fields.items()})
        else:
            found = (_served(opened, con, q, have)  # JSON encoded once
                     if fmt is Format.json and not q.columns and q.subquery is None else None)
            if found is not None:
                (table_name, by_position), cols = found
                total, encoded = run_list_json(con, q, table_name, by_position)
            else:
                total, rows, cols = run_list(con, q, have)
        hint = None
        if total == 0:
            absent, failed = _absent(con)
            hint = (_advice(empty_hint(con, q, opened.loaded_sources(), absent, failed))
                    if opened.id is not None else
                    "no snapshot is published yet: run `perfledger refresh` (see /healthz)")
        elif q.caveat is not None:  # some rows need a word (e.g. costs with no price)
            hint = caveat_hint(con, q, have, opened.loaded_sources(), _absent(con)[0])
    except BaseException:  # a failed query may leave the cursor busy: the next one is fresh
        opened.drop_local_cursor()
        raise
    return list_response(request, opened, total=total, rows=rows, columns=cols, limit=p.limit,
                         offset=p.offset, fmt=fmt, max_age=max_age, hint=hint, arrow=arrow,
                         headers=headers, csv_escape=p.csv_escape, encoded=encoded)


def _served(opened: Opened, con, q: ListQuery,
            have: frozenset[str] | None) -> tuple[tuple[str, tuple[str, ...]], list[str]] | None:
    """The serving table of ``q``'s relation (its name and its rows' JSON by position) and
    its columns, built once per snapshot; None for a relation too large for one
    (``Opened.serving``)."""
    base, base_params, cols, order = opened.shape(
        q.relation, q.public, lambda: serving_source(con, q, have))
    served = opened.serving(q.relation, cols, base, base_params, order,
                            lambda row: encode_row(row, cols))
    return None if served is None else (served, cols)


def _advice(empty: Empty) -> str:
    """Why nothing matched, with what to send to see more where the defaults kept rows out."""
    if empty.outside_defaults:
        return empty.reason + ": add division=all&availability=all to see every system"
    return empty.reason


def _absent(con) -> tuple[Callable[[str], str], Callable[[str], dict[str, str]]]:
    """Why a source has no rows in this snapshot, and which of its parts failed in the last
    refresh (part -> why), from the journal the snapshot recorded (read only when asked)."""
    runs: list[dict] = []

    def journal() -> list[dict]:
        if not runs:
            runs.extend(health.snapshot_journal(con))
        return runs

    return (lambda source: health.absent_reason(source, journal()),
            lambda source: health.failed_parts(source, journal()))


def render_item(request: Request, opened: Opened, payload: dict, *, memo: bool = False,
                journal: bool = False) -> Response:
    """Render one object with the cache headers; ``memo`` lets the response cache keep it
    (only for payloads computed from the snapshot and the query alone); a ``journal`` payload
    (read from the run journal) is validated by its body (``item_response``)."""
    if memo:
        mark_cacheable(request)
    return item_response(request, opened, payload, settings_of(request).api_cache_max_age,
                         journal=journal)


AS_OF_RANGE = (datetime(1970, 1, 1, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC))

# The ISO 8601 forms as_of takes, each with one meaning: a calendar date in extended form
# (the end of that day, UTC), or that date with a time (hours and minutes, optional seconds
# and fraction) and an optional offset (Z or +hh:mm; none means UTC). Basic forms
# (20261204), week and ordinal dates, bare hours and offsets with seconds are refused rather
# than read a second way.
AS_OF_FORM = re.compile(r"(?P<day>\d{4}-\d{2}-\d{2})"
                        r"(?:[T ](?P<time>\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)"
                        r"(?P<offset>Z|[+-]\d{2}:\d{2})?)?")


def parse_as_of(value: str | None) -> datetime | None:
    """``YYYY-MM-DD`` (the end of that day, UTC) or ``YYYY-MM-DDThh:mm[:ss[.ffffff]]`` with
    ``Z``, ``±hh:mm`` or no offset (UTC), between 1970-01-01 and 9999-12-30; 422 otherwise,
    naming the accepted forms and range."""
    if value is None:
        return None
    accepted = (f"as_of: {value[:64]!r} is not an ISO 8601 date (YYYY-MM-DD) or date and time "
                f"(YYYY-MM-DDThh:mm[:ss][Z|+hh:mm]) from {AS_OF_RANGE[0].date()} to "
                f"{AS_OF_RANGE[1].date()}")
    form = AS_OF_FORM.fullmatch(value)
    try:
        if form is None:
            raise ValueError(value)
        if form["time"] is None:
            moment = datetime.combine(date.fromisoformat(form["day"]) + timedelta(days=1),
                                      time(), UTC) - timedelta(microseconds=1)
        else:
            moment = datetime.fromisoformat(f"{form['day']}T{form['time']}"
                                            f"{(form['offset'] or '+00:00').replace('Z', '+00:00')}")
            moment = moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise QueryError(accepted, param="as_of") from None
    if not AS_OF_RANGE[0] <= moment <= AS_OF_RANGE[1] + timedelta(days=1):
        raise QueryError(accepted, param="as_of")
    return moment
