"""The FastAPI application factory. Read-only: every route is a GET over the current snapshot."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio.to_thread
import fastapi_offline
import httpx
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.middleware.gzip import GZipMiddleware

from api import errors, mcp
from api.middleware import RequestGuard, SecurityHeaders
from api.params import MAX_VALUES, VALUE_CAPS
from api.responses import HeadAsGet, ResponseCache
from api.routes import (
    calc,
    derived,
    evidence,
    explorer,
    observations,
    prices,
    provenance,
    results,
)
from api.snapshot import ANSWERING, PINNED, Opened, SnapshotReader
from warehouse.settings import Settings
from warehouse.storage.store import Layout

TAGS = [
    {"name": "results", "description": "MLPerf Inference results (evidence: measured)."},
    {"name": "derived", "description": "Ratios, costs, latency bounds, claim checks (evidence: derived)."},
    {"name": "observations", "description": "InferenceX observations (third_party_measured) and "
                                             "the throughput-interactivity frontier."},
    {"name": "evidence", "description": "Curated claims, hardware specs, model shapes, MLPerf rules."},
    {"name": "prices", "description": "Azure list prices, versioned, per accelerator-hour."},
    {"name": "calculators", "description": "The article's bounds, from warehouse specs or explicit numbers."},
    {"name": "provenance", "description": "Source snapshots, refresh history, validation, health."},
    {"name": "meta", "description": "Values for dashboard drop-downs."},
]


class PerfledgerAPI(FastAPI):
    """FastAPI with the one response cache in front of its whole middleware stack: a repeated
    request is replayed from the recorded bytes before FastAPI's own layers run (its error,
    telemetry and body-limit middleware would run again for every replayed answer); a request
    not recorded goes to ``FastAPI.__call__`` as usual."""

    response_cache: ResponseCache
    reader: SnapshotReader

    async def __call__(self, scope, receive, send) -> None:
        holder: list[Opened] = []  # this request's snapshots, once it reads one
        held = ANSWERING.set(holder)
        try:
            await self.response_cache(scope, receive, send)
        finally:
            ANSWERING.reset(held)
            if holder:
                self.reader.release(holder)

    async def compute(self, scope, receive, send) -> None:
        await super().__call__(scope, receive, send)


def create_app(settings: Settings | None = None) -> PerfledgerAPI:
    """Build the API over the data directory in ``settings`` (read from the environment when
    not given, as uvicorn workers do)."""
    settings = settings or Settings()
    app = PerfledgerAPI(title="perfledger", version="0.1.0", openapi_tags=TAGS,
                  docs_url=None, redoc_url=None,
                  # operation ids are the route functions' names: a generated client's too
                  generate_unique_id_function=lambda route: route.name,
                  description="LLM-inference evidence: measured results, list prices and dated "
                              "vendor claims, every row labelled with what it is and where it "
                              "came from. Read-only.")
    app.state.settings = settings
    app.state.reader = app.reader = SnapshotReader(
        Layout(settings.data_path), settings.snapshot_check_interval,
        warm=_warmer(app) if settings.api_warm else None)
    errors.install(app)
    modules = (results, derived, observations, evidence, prices, calc, provenance, explorer)
    app.add_middleware(GZipMiddleware, minimum_size=1024)  # when the client accepts gzip
    app.add_middleware(HeadAsGet)
    if settings.api_cors_origins:  # added last, so it wraps cached answers too
        app.add_middleware(CORSMiddleware, allow_origins=settings.api_cors_origins,
                           allow_methods=["GET", "HEAD"], allow_headers=["*"],
                           expose_headers=["ETag", "X-Total-Count", "X-Snapshot-Id", "Link"])
    app.add_middleware(RequestGuard)
    app.add_middleware(SecurityHeaders)
    app.response_cache = ResponseCache(app.compute, reader=app.state.reader,
                                       max_bytes=settings.api_response_cache_mb * 2**20,
                                       origins=settings.api_cors_origins)
    for module in modules:
        app.include_router(module.router, responses=errors.RESPONSES)
    app.router.lifespan_context = _started(app, mcp.mount(app, mcp.build(app)))
    app.mount("/static/docs", StaticFiles(directory=DOCS_ASSETS), name="docs-assets")
    app.mount("/static", StaticFiles(directory=explorer.STATIC), name="static")
    _docs_pages(app)
    _document(app)
    logging.getLogger("perfledger.api").info("serving data directory %s", settings.data_path)
    return app


def create_served_app() -> PerfledgerAPI:
    """The app a server process serves (``perfledger serve`` and ``run``): ``create_app``,
    then every object alive at that point (the modules, routes and models: the process's own,
    for its lifetime) moved out of the garbage collector's sight (``gc.freeze``). A full
    collection under load then walks what requests and snapshots made since, not the program
    itself: 107 ms at 1x in process before, 10-25 ms after a warm-up. Snapshots open later,
    so their objects are collected as ever (a frozen object in a cycle is never freed): not
    for ``serve --refresh-every``, whose refresh runs in this process meanwhile."""
    app = create_app()
    gc.collect()
    gc.freeze()
    return app


def _started(app: PerfledgerAPI, lifespan: Callable) -> Callable:
    """``lifespan`` after the current snapshot is opened and warmed (``api_warm``): the server
    takes its first request once what every snapshot builds once is built. Routes run in at
    most ``api_threads`` threads of this event loop (anyio's limiter, 40 by default; why and
    what it measured: README, "Performance")."""
    @asynccontextmanager
    async def run(_app):
        anyio.to_thread.current_default_thread_limiter().total_tokens = (
            app.state.settings.api_threads)
        if app.state.settings.api_warm:
            await run_in_threadpool(app.state.reader.start)
        async with lifespan(_app):
            yield
    return run


def _warmer(app: PerfledgerAPI) -> Callable[[Opened], None]:
    """What warms a snapshot: every GET path under /v1 the OpenAPI document lists without path
    parameters, asked once plainly, on that snapshot (``PINNED``) and past the response cache,
    so each builds what its answers share (hot views, serving tables, kept rows); paths that
    need parameters answer 422 at no cost."""
    def warm(opened: Opened) -> None:
        paths = [path for path, ops in app.openapi()["paths"].items()
                 if "get" in ops and path.startswith("/v1/") and "{" not in path]

        async def ask() -> None:
            PINNED.set(opened)
            transport = httpx.ASGITransport(app=app.compute)
            async with httpx.AsyncClient(transport=transport,
                                         base_url=app.state.settings.public_url) as client:
                for path in paths:
                    await client.get(path)
        asyncio.run(ask())
    return warm


# Swagger UI and ReDoc from the fastapi-offline package (PyPI), served from this origin: the
# docs pages work with no internet, as the explorer does with Plotly.
DOCS_ASSETS = Path(fastapi_offline.__file__).parent / "static"


def _docs_pages(app: FastAPI) -> None:
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html

    # The pages may load nothing from elsewhere (ReDoc's footer would fetch its logo from a CDN).
    same_origin = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                   "style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; "
                   "worker-src 'self' blob:; font-src 'self' data:"}

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        page = get_swagger_ui_html(openapi_url="/openapi.json", title="perfledger API",
                                   swagger_js_url="/static/docs/swagger-ui-bundle.js",
                                   swagger_css_url="/static/docs/swagger-ui.css",
                                   swagger_favicon_url="/static/docs/favicon.png")
        page.headers.update(same_origin)
        return page

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        page = get_redoc_html(openapi_url="/openapi.json", title="perfledger API",
                              redoc_js_url="/static/docs/redoc.standalone.js",
                              redoc_favicon_url="/static/docs/favicon.png", with_google_fonts=False)
        page.headers.update(same_origin)
        return page


EXAMPLES = Path(__file__).with_name("examples.json")
ROW_FORMATS = {
    "text/csv": {"schema": {"type": "string"},
                 "example": "id,round,organization\r\n9bb82bbc93897023,v6.1,NVIDIA\r\n"},
    "application/x-ndjson": {"schema": {"type": "string"},
                             "example": '{"id":"9bb82bbc93897023","round":"v6.1"}\n'},
    "application/vnd.apache.parquet": {"schema": {"type": "string", "format": "binary"}},
}


def _document(app: FastAPI) -> None:
    """OpenAPI with a recorded example response per endpoint (api/examples.json, made by
    ``python -m tools.make_examples``), the row formats and paging parameters of list routes
    (``_list_params``) and the values a repeatable parameter may carry (``api.params``)."""
    from fastapi.openapi.utils import get_openapi

    def openapi() -> dict:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description,
                             routes=app.routes, tags=app.openapi_tags)
        examples = json.loads(EXAMPLES.read_text()) if EXAMPLES.exists() else {}
        for path, item in schema["paths"].items():
            op = item.get("get")
            if not op:
                continue
            ok = op["responses"].setdefault("200", {"description": "OK"})
            if path in examples:
                ok.setdefault("content", {}).setdefault("application/json", {})["example"] = \
                    examples[path]
            json_schema = ok.get("content", {}).get("application/json", {}).get("schema", {})
            page = json_schema.get("$ref", "").split("/")[-1]
            if page.startswith("ListPage_"):
                ok["content"].update(ROW_FORMATS)  # format= or Accept: the rows alone
                _list_params(op, schema, page, app.state.settings.api_max_limit)
            for param in op.get("parameters", []):  # each repeatable one's values counted
                array = param["schema"].get("anyOf", [param["schema"]])[0]
                if array.get("type") == "array" and "enum" not in array["items"]:
                    array["maxItems"] = VALUE_CAPS.get(param["name"], MAX_VALUES)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _list_params(op: dict, schema: dict, page: str, max_limit: int) -> None:
    """A list route's paging parameters as the server checks them: ``limit`` up to the
    server's ``api_max_limit`` (a setting), ``sort`` and ``columns`` among the row model's
    columns (``-`` before a sort key for descending; empty: not given); a row holds the columns
    asked for, so none is required."""
    rows = schema["components"]["schemas"][page]["properties"]["rows"]["items"]["$ref"]
    row = schema["components"]["schemas"][rows.split("/")[-1]]
    row.pop("required", None)
    columns = list(row["properties"])
    allowed = {"sort": ["", *columns, *("-" + c for c in columns)], "columns": ["", *columns]}
    for param in op.get("parameters", []):
        if param["name"] == "limit":
            param["schema"]["maximum"] = max_limit
        elif param["name"] in allowed:
            param["schema"]["anyOf"][0]["items"]["enum"] = allowed[param["name"]]
