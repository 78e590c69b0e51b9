"""The cold path's shortcut through FastAPI: a GET of a route whose parameters are all query
parameters is parsed as FastAPI's ``request_params_to_args`` reads them (every value of a
repeatable parameter, the last of another, absent or empty = the default) and validated by
each parameter's own FastAPI field (``ModelField.validate``), and its endpoint called
directly, without the per-request dependency solving around them (0.9 ms of a 3.2 ms filtered
results request, timed in process). Anything else — an unknown or invalid parameter, an
error in the endpoint, a route with path, header, cookie or body parameters, or dependencies
that are not plain functions — goes the regular way, so errors and their 422s are FastAPI's.

A list route is first answered on the event loop, with ``api.snapshot.IN_LOOP`` set: a page
found in memory (the in-memory copies and the encoded rows, ``render_list``) needs no thread,
and a thread hop and its GIL contention cost more than the answer (at concurrency 16 the
costs query answered ~450 req/s through the thread pool, ~1,000-1,300 on the loop). Anything
that would block the loop — a DuckDB query, opening a snapshot, building a per-snapshot copy —
raises ``NeedsThread`` before doing it, and the request is answered again in a worker thread.

It sits inside the middleware (gzip, HEAD, CORS apply to what it answers) and answers exactly
what the regular path does; ``tests/api/test_speed_paths.py`` compares the two byte for byte.
"""

from __future__ import annotations

import copy
import inspect
import typing
from dataclasses import dataclass

from fastapi._compat import ModelField, field_annotation_is_sequence
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from api.routes.common import accepted_params
from api.snapshot import IN_LOOP, NeedsThread


@dataclass
class _Call:
    """One function of a route's dependency tree: its own query parameters, where the request
    goes, and its sub-dependencies by the argument name they fill."""

    call: object
    request_name: str | None
    subs: list[tuple[str, _Call]]
    fields: list[_Param]

    def run(self, request: Request, query: QueryParams) -> object:
        values: dict = {}
        for field, alias, many, absent in self.fields:  # as request_params_to_args reads them
            raw = query.getlist(alias) if many else query.get(alias)
            if raw is None or (many and not raw):
                if absent is _NEEDED:
                    raise _Fallback
                values[field.name] = copy.deepcopy(field.default) if absent is _COPIED \
                    else absent
                continue
            value, errors = field.validate(raw, values, loc=("query", alias))
            if errors:
                raise _Fallback
            values[field.name] = value
        for name, sub in self.subs:
            values[name] = sub.run(request, query)
        if self.request_name:
            values[self.request_name] = request
        return self.call(**values)  # type: ignore[operator]

    def respond(self, request: Request, query: QueryParams) -> Response:
        response = self.run(request, query)
        if not isinstance(response, Response):
            raise _Fallback
        return response


class _Fallback(Exception):
    """The request needs the regular path."""


_NEEDED = object()  # an absent parameter FastAPI must handle (required, or a validated default)
_COPIED = object()  # an absent parameter whose default is copied per request (mutable)
_PLAIN = (type(None), bool, int, float, str, bytes)

# A query parameter: its field, its name, whether it repeats, and what its absence gives
# (the default itself when immutable, decided once rather than per request).
_Param = tuple[ModelField, str, bool, object]


def _param(field: ModelField) -> _Param:
    if field.field_info.is_required() or field.field_info.validate_default:
        absent: object = _NEEDED
    else:
        absent = field.default if type(field.default) in _PLAIN else _COPIED
    return (field, field.alias, field_annotation_is_sequence(field.field_info.annotation), absent)


def _plan(dependant: Dependant) -> _Call | None:
    """The call plan of a dependency tree made only of plain functions taking query
    parameters and the request; None for anything else."""
    call = dependant.call
    if (call is None or inspect.iscoroutinefunction(call) or inspect.isgeneratorfunction(call)
            or dependant.path_params or dependant.header_params or dependant.cookie_params
            or dependant.body_params or dependant.websocket_param_name
            or dependant.http_connection_param_name or dependant.response_param_name
            or dependant.background_tasks_param_name or dependant.security_scopes_param_name
            or not dependant.use_cache):
        return None
    subs = []
    for sub in dependant.dependencies:
        planned = _plan(sub)
        if planned is None or sub.name is None:
            return None
        subs.append((sub.name, planned))
    if any(field.field_info.validation_alias is not None for field in dependant.query_params):
        return None  # parameters under several names: FastAPI's own lookup
    return _Call(call, dependant.request_param_name, subs,
                 [_param(field) for field in dependant.query_params])


def _answers_response(route: APIRoute) -> bool:
    """The endpoint returns a Response itself (nothing for FastAPI to serialise)."""
    try:
        answer = typing.get_type_hints(route.endpoint).get("return")
    except (NameError, TypeError):
        return False
    return isinstance(answer, type) and issubclass(answer, Response)


class DirectRoutes:
    """ASGI middleware: GET requests of the routes it could plan, answered by calling the
    endpoint directly (see the module's docstring); every other request passes through."""

    def __init__(self, app, routes: list[APIRoute]) -> None:
        self.app = app
        self.plans: dict[str, tuple[_Call, set[str]]] = {}
        self.in_loop: set[str] = set()  # list routes: tried on the event loop first
        self.answered_in_loop = 0
        for route in routes:
            if "GET" not in (route.methods or ()) or route.param_convertors \
                    or not route.include_in_schema or not _answers_response(route):
                continue
            planned = _plan(route.dependant)
            if planned is not None:
                self.plans[route.path] = (planned, accepted_params(route.dependant))
                if getattr(route.response_model, "__name__", "").startswith("ListPage"):
                    self.in_loop.add(route.path)

    async def __call__(self, scope, receive, send) -> None:
        entry = self.plans.get(scope["path"]) if scope["type"] == "http" \
            and scope["method"] == "GET" else None
        if entry is None:
            await self.app(scope, receive, send)
            return
        planned, accepted = entry
        query = QueryParams(scope["query_string"])
        if any(k not in accepted for k in query):  # strict parameters: the regular 422
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        response = None
        try:
            if scope["path"] in self.in_loop:  # from memory, or NeedsThread
                token = IN_LOOP.set(True)
                try:
                    response = planned.respond(request, query)
                    self.answered_in_loop += 1
                except NeedsThread:
                    pass
                finally:
                    IN_LOOP.reset(token)
            if response is None:
                response = await run_in_threadpool(planned.respond, request, query)
        except Exception:  # noqa: BLE001 - the regular path raises it again, handled there
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)
