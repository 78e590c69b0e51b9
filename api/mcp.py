"""An MCP server over the same questions as the REST API, for agents: results, per-accelerator
figures, ratios, costs, the frontier, claim checks and the accelerator catalogue.

Each tool is a thin, read-only door to one ``/v1`` route of *this* app, called in process
(httpx's ASGI transport; no socket, no second code path): the same filters and defaults, the
same evidence labels, citations and attributions on every row, the same typed error envelope
(``{"error": {"status", "code", "message", "param"}}``) when a parameter is refused. Served
over stdio by ``perfledger mcp`` and over streamable HTTP at ``/mcp/`` by ``perfledger serve``
(stateless, JSON responses, the request-body limit below).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import httpx
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

# A tool call is a small JSON-RPC message; anything larger is refused by the MCP transport.
MAX_REQUEST_BYTES = 64 * 1024
READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True,
                            openWorldHint=False)
INSTRUCTIONS = (
    "perfledger: LLM-inference evidence. Every row says what it is (evidence: measured = MLPerf, "
    "third_party_measured = SemiAnalysis InferenceX, vendor_claim, list_price, assumption, "
    "derived) and where it came from (source, MLPerf result ID or citation, run URL). Quote the "
    "evidence label and the citation with any figure you repeat. Per GPU means per every GPU a "
    "configuration occupies. MLPerf rows default to the closed division and available systems.")

Strs = Annotated[list[str] | None, Field(None, description="One value or several.")]
Limit = Annotated[int, Field(20, ge=1, le=1000, description="Rows per page.")]
Offset = Annotated[int, Field(0, ge=0, description="Rows to skip.")]
Sort = Annotated[list[str] | None, Field(None, description="Sort keys; '-' for descending, "
                                         "e.g. ['cost_per_million_tokens'].")]


Get = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def build(app: Any) -> MCPServer:
    """The MCP server whose tools answer from ``app`` (the perfledger FastAPI app)."""
    server = MCPServer(name="perfledger", instructions=INSTRUCTIONS, version="0.1.0")
    get = _caller(httpx.ASGITransport(app=app))
    _mlperf_tools(server, get)
    _other_tools(server, get)
    return server


def _caller(transport: httpx.ASGITransport) -> Get:
    """A tool's door to its route: GET in process, the API's error envelope passed on."""

    async def get(path: str, params: dict[str, Any]) -> dict[str, Any]:
        """GET ``path`` with a tool's arguments (its ``locals()``, less this closure)."""
        query = {k: v for k, v in params.items()
                 if k != "get" and v is not None and v != []}
        async with httpx.AsyncClient(transport=transport, base_url="http://perfledger") as c:
            r = await c.get(path, params=query)
        body = r.json()
        if r.status_code != 200:
            return {"error": body.get("error", body)}
        return body

    return get


def _mlperf_tools(server: MCPServer, get: Get) -> None:
    """The tools over MLPerf results: results, per accelerator, ratios, costs."""

    @server.tool(annotations=READ_ONLY)
    async def results(model: Strs = None, scenario: Strs = None, accelerator: Strs = None,
                      organization: Strs = None, round: Strs = None, division: Strs = None,
                      availability: Strs = None, sort: Sort = None, limit: Limit = 20,
                      offset: Offset = 0) -> dict[str, Any]:
        """MLPerf Inference results (evidence: measured), each with its MLPerf result ID or
        citation and MLCommons' notice. Filters as /v1/results."""
        return await get("/v1/results", locals())

    @server.tool(annotations=READ_ONLY)
    async def per_accelerator(model: Strs = None, scenario: Strs = None,
                              accelerator: Strs = None, round: Strs = None,
                              division: Strs = None, availability: Strs = None,
                              sort: Sort = None, limit: Limit = 20,
                              offset: Offset = 0) -> dict[str, Any]:
        """MLPerf Tokens/s results divided by the system's accelerators, with the datasheet
        bandwidth and TDP beside them (derived). As /v1/per-accelerator."""
        return await get("/v1/per-accelerator", locals())

    @server.tool(annotations=READ_ONLY)
    async def ratios(model: Strs = None, scenario: Strs = None, accelerator: Strs = None,
                     round: Strs = None, division: Strs = None, availability: Strs = None,
                     sort: Sort = None, limit: Limit = 20, offset: Offset = 0) -> dict[str, Any]:
        """Server/Offline and Interactive/Offline throughput ratios of the same system
        (derived: measured), both results cited. As /v1/ratios."""
        return await get("/v1/ratios", locals())

    @server.tool(annotations=READ_ONLY)
    async def costs(model: Strs = None, scenario: Strs = None, accelerator: Strs = None,
                    round: Strs = None, division: Strs = None, availability: Strs = None,
                    basis: Strs = None,
                    rate: Annotated[list[float | str] | None, Field(None, description=(
                        "Assumed USD per accelerator-hour: flat (10) or one accelerator's "
                        "(nvidia-b200-sxm-180gb:6)."))] = None,
                    provider: Annotated[list[str] | None, Field(None, description=(
                        "Price on these providers (azure, aws, gcp, vast...; all: every one, "
                        "with the cheapest and the median) instead of one Azure region."))] = None,
                    region: str = "eastus2", offer: str = "on_demand", os: str = "linux",
                    price_status: Strs = None, evidence: Strs = None, sort: Sort = None,
                    limit: Limit = 20, offset: Offset = 0) -> dict[str, Any]:
        """Cost per million tokens of every MLPerf Tokens/s result (evidence=measured, the
        default), InferenceX observation (third_party_measured) and imported run
        (self_measured), on Azure list prices, every provider's (provider=all) and/or assumed
        rates per accelerator-hour (every accelerator charged). Sort by cost_per_million_tokens
        for the cheapest. As /v1/costs."""
        return await get("/v1/costs", locals())


def _other_tools(server: MCPServer, get: Get) -> None:
    """The frontier, the claim checks and the accelerator catalogue."""

    @server.tool(annotations=READ_ONLY)
    async def frontier(model: str, isl: int, osl: int, accelerator: Strs = None,
                       framework: Strs = None, precision: Strs = None,
                       spec_method: Strs = None, disagg: bool | None = None,
                       interactivity: float | None = None, rate: float = 10.0,
                       limit: Limit = 200, offset: Offset = 0) -> dict[str, Any]:
        """Output tokens/s per every GPU against tokens/s per user: the InferenceX frontier
        per accelerator (third_party_measured), MLPerf results on the same axes (cited), the
        answer at an interactivity, and cost per million tokens. As /v1/frontier."""
        return await get("/v1/frontier", locals())

    @server.tool(annotations=READ_ONLY)
    async def claim_checks(vendor: Strs = None, round: Strs = None, division: Strs = None,
                           availability: Strs = None, metric: Strs = None,
                           verdict: Strs = None, limit: Limit = 20,
                           offset: Offset = 0) -> dict[str, Any]:
        """Dated vendor claims (vendor_claim) next to what MLPerf measured, with the verdict in
        words. As /v1/claim-checks."""
        return await get("/v1/claim-checks", locals())

    @server.tool(annotations=READ_ONLY)
    async def accelerators() -> dict[str, Any]:
        """The accelerator catalogue: ids, spellings per MLPerf round, datasheet figures with
        their sources, Azure SKUs, and how each round's names map. As /v1/accelerators."""
        return await get("/v1/accelerators", {})


def mount(app: Any, server: MCPServer) -> Any:
    """Mount the server's streamable HTTP transport at ``/mcp/`` and return the lifespan that
    runs its session manager (FastAPI does not run a mounted app's own lifespan)."""
    settings = app.state.settings
    app.mount("/mcp", server.streamable_http_app(
        streamable_http_path="/", stateless_http=True, json_response=True,
        max_request_body_size=MAX_REQUEST_BYTES, host=settings.api_host))

    @asynccontextmanager
    async def lifespan(_app: Any):
        async with server.session_manager.run():
            yield

    return lifespan
