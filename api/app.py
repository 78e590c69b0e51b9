"""The FastAPI application factory. Read-only: every route is a GET over the current snapshot."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from api import errors
from api.responses import CachedResponses, ResponseCache
from api.routes import calc, derived, evidence, explorer, prices, provenance, results
from api.snapshot import SnapshotReader
from warehouse.settings import Settings
from warehouse.store import Layout

TAGS = [
    {"name": "results", "description": "MLPerf Inference results (evidence: measured)."},
    {"name": "derived", "description": "Ratios, costs, latency bounds, claim checks (evidence: derived)."},
    {"name": "evidence", "description": "Curated claims, hardware specs, model shapes, MLPerf rules."},
    {"name": "prices", "description": "Azure list prices, versioned, per accelerator-hour."},
    {"name": "calculators", "description": "The article's bounds, from warehouse specs or explicit numbers."},
    {"name": "provenance", "description": "Source snapshots, refresh history, validation, health."},
    {"name": "meta", "description": "Values for dashboard drop-downs."},
]


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the API over the data directory in ``settings`` (read from the environment when
    not given, as uvicorn workers do)."""
    settings = settings or Settings()
    app = FastAPI(title="perfledger", version="0.1.0", openapi_tags=TAGS,
                  description="LLM-inference evidence: measured results, list prices and dated "
                              "vendor claims, every row labelled with what it is and where it "
                              "came from. Read-only.")
    app.state.settings = settings
    app.state.reader = SnapshotReader(Layout(settings.data_path), settings.snapshot_check_interval)
    app.state.responses = ResponseCache(settings.api_response_cache)
    errors.install(app)
    app.add_middleware(CachedResponses, cache=app.state.responses, reader=app.state.reader)
    if settings.api_cors_origins:  # added last, so it wraps cached answers too
        app.add_middleware(CORSMiddleware, allow_origins=settings.api_cors_origins,
                           allow_methods=["GET", "HEAD"], allow_headers=["*"],
                           expose_headers=["ETag", "X-Total-Count", "X-Snapshot-Id"])
    for module in (results, derived, evidence, prices, calc, provenance, explorer):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=explorer.STATIC), name="static")
    _document(app)
    logging.getLogger("perfledger.api").info("serving data directory %s", settings.data_path)
    return app


EXAMPLES = Path(__file__).with_name("examples.json")
ERROR_EXAMPLE = {"error": {"status": 422, "code": "invalid_parameter",
                           "message": "limit must be at most 1000 (got 5000); page with offset "
                                      "or the next link", "param": "limit"}}


def _document(app: FastAPI) -> None:
    """OpenAPI with a recorded example response per endpoint (api/examples.json, made by
    ``python -m tools.make_examples``) and the one error shape on 422/404."""
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
            op["responses"]["422"] = {
                "description": "A parameter is invalid; the message says what is accepted.",
                "content": {"application/json": {"example": ERROR_EXAMPLE}}}
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
