"""One JSON error shape for every error the API returns:

    {"error": {"status": 422, "code": "invalid_parameter", "message": "...", "param": "limit"}}
"""

from __future__ import annotations

import difflib
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from warehouse.exceptions import PerfledgerError, QueryError, SnapshotError

log = logging.getLogger("perfledger.api")

# The methods every resource answers (the API is read-only; CORS preflights are answered by
# CORSMiddleware before routing when CORS is on).
ALLOW = "GET, HEAD, OPTIONS"

# The status of an error in a word (``code``), for clients that branch on it.
CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
         406: "not_acceptable", 414: "uri_too_long", 422: "invalid_parameter", 500: "internal_error",
         503: "unavailable"}


class ErrorDetail(BaseModel):
    """What went wrong, in words a person can act on."""

    status: int = Field(description="The response's HTTP status, repeated.")
    code: str = Field(description="The status in a word.",
                      json_schema_extra={"enum": [*CODES.values(), "error"]})
    message: str = Field(description="What is wrong and what is accepted instead.")
    param: str | None = Field(None, description="The query parameter at fault, when one is.")


class ErrorEnvelope(BaseModel):
    """The body of every error response."""

    error: ErrorDetail


def _typed(description: str, **example: Any) -> dict:
    return {"model": ErrorEnvelope, "description": description,
            **({"content": {"application/json": {"example": example}}} if example else {})}


# The error answers every operation may give, declared once for the OpenAPI document (every
# router is included with them); item routes add NOT_FOUND. A generated client types them all.
RESPONSES: dict[int | str, dict[str, Any]] = {
    422: _typed("A parameter is invalid, unknown or out of range; the message says what is "
                "accepted.", error={"status": 422, "code": "invalid_parameter",
                                    "message": "limit must be at most 1000 (got 5000); page "
                                               "with offset or the next link",
                                    "param": "limit"}),
    414: _typed("The query string is too long; ask for fewer values at a time."),
    500: _typed("An internal error; the traceback is in the server log."),
    503: _typed("The warehouse snapshot cannot be read (see /healthz)."),
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: _typed("No item with that id in the snapshot served.")}


def error_body(status: int, message: str, param: str | None = None) -> dict:
    """The body of every error response."""
    body: dict = {"status": status, "code": CODES.get(status, "error"), "message": message}
    if param:
        body["param"] = param
    return {"error": body}


def error_response(status: int, message: str, param: str | None = None) -> JSONResponse:
    """A JSON error response in the one shape."""
    return JSONResponse(error_body(status, message, param), status_code=status)


def accepted_params(request: Request) -> list[str]:
    """The query parameters the matched route takes (its query model's fields)."""
    dependant = getattr(request.scope.get("route"), "dependant", None)
    names: set[str] = set()
    for field in getattr(dependant, "query_params", []):
        model = field.field_info.annotation
        fields = getattr(model, "model_fields", None)
        names |= ({f.alias or n for n, f in fields.items()} if fields is not None
                  else {field.alias})  # a model with no field takes no parameter
    return sorted(names)


def unknown_parameter(name: str, accepted: list[str]) -> str:
    """'unknown parameter' with the accepted names and the closest one, when one is close."""
    close = difflib.get_close_matches(name, accepted, n=1, cutoff=0.6) or sorted(
        (a for a in accepted if name.startswith(a) or a.startswith(name)), key=len)[-1:]
    return (f"unknown parameter {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
            + (f"; accepted: {', '.join(accepted)}" if accepted
               else "; this route takes no query parameter"))


def install(app: FastAPI) -> None:
    """Register the handlers that translate errors into the one shape."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        unknown = [e for e in errors if e.get("type") == "extra_forbidden"]
        if unknown:  # a parameter the route's query model does not have
            name = str(unknown[0]["loc"][-1])
            return error_response(422, unknown_parameter(name, accepted_params(request)), name)
        first = errors[0]
        # the parameter's name, not its position in a list (``rate``, never ``rate.0``)
        loc = [str(x) for x in first.get("loc", [])
               if x not in ("query", "path", "body") and not isinstance(x, int)]
        param = ".".join(loc) or None
        got = first.get("input") if first.get("type") != "missing" else None
        message = f"{param}: {first.get('msg')}" + (f" (got {got!r})" if got is not None else "")
        return error_response(422, message, param)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 405:
            if request.method == "OPTIONS":  # RFC 9110 9.3.7: what the resource allows
                return Response(status_code=204, headers={"Allow": ALLOW})
            response = error_response(405, f"{request.method} is not allowed here; the API is "
                                      f"read-only: {ALLOW}")
            response.headers["Allow"] = ALLOW  # RFC 9110 15.5.6: a 405 names what is allowed
            return response
        return error_response(exc.status_code, str(exc.detail))

    @app.exception_handler(QueryError)
    async def query_error(request: Request, exc: QueryError) -> JSONResponse:
        return error_response(422, exc.message, exc.param)

    @app.exception_handler(SnapshotError)
    async def snapshot_error(request: Request, exc: SnapshotError) -> JSONResponse:
        log.error("snapshot unavailable: %s", exc)
        return error_response(503, f"the warehouse snapshot is unavailable: {exc.message}")

    @app.exception_handler(PerfledgerError)
    async def other(request: Request, exc: PerfledgerError) -> JSONResponse:
        log.error("unhandled perfledger error", exc_info=exc)
        return error_response(500, "internal error; see the server log")

    @app.exception_handler(Exception)
    async def unknown(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal error; see the server log")
