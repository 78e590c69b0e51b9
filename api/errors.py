"""One JSON error shape for every error the API returns:

    {"error": {"status": 422, "code": "invalid_parameter", "message": "...", "param": "limit"}}
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from warehouse.exceptions import PerfledgerError, QueryError, SnapshotError

log = logging.getLogger("perfledger.api")

CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
         406: "not_acceptable", 422: "invalid_parameter", 500: "internal_error",
         503: "unavailable"}


def error_body(status: int, message: str, param: str | None = None) -> dict:
    """The body of every error response."""
    body: dict = {"status": status, "code": CODES.get(status, "error"), "message": message}
    if param:
        body["param"] = param
    return {"error": body}


def error_response(status: int, message: str, param: str | None = None) -> JSONResponse:
    """A JSON error response in the one shape."""
    return JSONResponse(error_body(status, message, param), status_code=status)


def install(app: FastAPI) -> None:
    """Register the handlers that translate errors into the one shape."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        # the parameter's name, not its position in a list (``rate``, never ``rate.0``)
        loc = [str(x) for x in first.get("loc", [])
               if x not in ("query", "path", "body") and not isinstance(x, int)]
        param = ".".join(loc) or None
        got = first.get("input")
        message = f"{param}: {first.get('msg')}" + (f" (got {got!r})" if got is not None else "")
        return error_response(422, message, param)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
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
