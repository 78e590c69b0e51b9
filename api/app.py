"""The FastAPI application factory. Read-only: every route is a GET over the current snapshot."""

from __future__ import annotations

import logging

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from api import errors
from api.routes import calc, derived, evidence, prices, provenance, results
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
    errors.install(app)
    if settings.api_cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.api_cors_origins,
                           allow_methods=["GET", "HEAD"], allow_headers=["*"],
                           expose_headers=["ETag", "X-Total-Count", "X-Snapshot-Id"])
    for module in (results, derived, evidence, prices, calc, provenance):
        app.include_router(module.router)
    logging.getLogger("perfledger.api").info("serving data directory %s", settings.data_path)
    return app
