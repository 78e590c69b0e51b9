"""The MCP server (#48 item 6): every tool through a real MCP client in process, the answers
equal to the REST API's (labels and citations included), a refused parameter answered with
the API's error envelope, the same server over streamable HTTP under ``perfledger serve`` and
over stdio under ``perfledger mcp``, and /llms.txt."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from api import mcp as mcp_server
from api.app import create_app
from tests.api.test_explorer import serve_data_dir
from tests.conftest import make_settings
from tests.helpers import copy_data_dir

TOOLS = {"results": "/v1/results", "per_accelerator": "/v1/per-accelerator",
         "ratios": "/v1/ratios", "costs": "/v1/costs", "frontier": "/v1/frontier",
         "claim_checks": "/v1/claim-checks", "accelerators": "/v1/accelerators"}
ARGS = {"frontier": {"model": "deepseek-r1", "isl": 8192, "osl": 1024}}


@pytest.fixture(scope="module")
def data(frontier_warehouse):
    return frontier_warehouse


@pytest.fixture
def app(data):
    return create_app(make_settings(data, data / "sources.toml"))


def run(coro):
    return asyncio.run(coro)


def test_every_tool_answers_as_its_route_does(app, client_for, data):
    rest = client_for(make_settings(data, data / "sources.toml"))

    async def main():
        async with Client(mcp_server.build(app)) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert set(listed) == set(TOOLS)
            assert all(t.annotations.read_only_hint for t in listed.values())
            out = {}
            for name in TOOLS:
                r = await c.call_tool(name, ARGS.get(name, {}))
                assert not r.is_error, (name, r.content)
                out[name] = r.structured_content
            return out

    answers = run(main())
    for name, path in TOOLS.items():
        params = {**ARGS.get(name, {}), **({"limit": 20} if name != "accelerators" else {})}
        if name == "frontier":
            params.update(limit=200, rate=10.0)
        expected = rest.get(path, params=params).json()
        got = answers[name]
        assert got.get("rows", got) == expected.get("rows", expected), name
    assert answers["results"]["rows"] and answers["frontier"]["rows"]
    assert all(r["evidence"] == "measured" for r in answers["results"]["rows"])


def test_the_cheapest_measured_cost_question_is_answered_with_citations(app):
    async def main():
        async with Client(mcp_server.build(app)) as c:
            r = await c.call_tool("costs", {"model": ["deepseek-r1"], "scenario": ["Offline"],
                                            "basis": ["assumed"], "rate": [10],
                                            "sort": ["cost_per_million_tokens"], "limit": 3})
            return r.structured_content

    answer = run(main())
    rows = answer["rows"]
    assert rows and [r["cost_per_million_tokens"] for r in rows] == sorted(
        r["cost_per_million_tokens"] for r in rows)
    cheapest = rows[0]
    # the figure, by hand: $10 x accelerators / (tokens/s x 3600) x 1e6
    assert cheapest["cost_per_million_tokens"] == pytest.approx(
        10 * cheapest["total_accelerators"] / (cheapest["result"] * 3600) * 1e6)
    assert cheapest["details_url"] and "MLPerf is a trademark" in cheapest["notice"]
    assert cheapest["basis"] == "derived: measured + assumption"


def test_a_refused_parameter_is_the_api_s_error_envelope(app):
    async def main():
        async with Client(mcp_server.build(app)) as c:
            return (await c.call_tool("results", {"scenario": ["Sideways"]})).structured_content

    error = run(main())["error"]
    assert error["status"] == 422 and error["param"] == "scenario"
    assert "Sideways" in error["message"]


def test_serve_mounts_the_same_tools_over_streamable_http(data, tmp_path):
    copy_data_dir(data / "var", tmp_path / "var")
    proc, base = serve_data_dir(tmp_path / "var")
    try:
        async def main():
            async with Client(f"{base}/mcp/") as c:
                names = {t.name for t in (await c.list_tools()).tools}
                r = await c.call_tool("accelerators", {})
                return names, r.structured_content

        names, catalogue = run(main())
        assert names == set(TOOLS)
        assert catalogue["total"] == len(catalogue["rows"]) > 0
    finally:
        proc.terminate()
        proc.wait(15)


def test_perfledger_mcp_serves_the_tools_over_stdio(data, tmp_path):
    copy_data_dir(data / "var", tmp_path / "var")
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "perfledger"), args=["mcp"],
        env={**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var")})

    async def main():
        async with Client(params) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            r = await c.call_tool("results", {"limit": 1})
            return names, r.structured_content

    names, answer = run(main())
    assert names == set(TOOLS)
    assert answer["total"] > 0 and answer["rows"][0]["evidence"] == "measured"


def test_llms_txt_describes_the_api_for_agents(client_for, data):
    client = client_for(make_settings(data, data / "sources.toml"))
    r = client.get("/llms.txt")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert text.startswith("# perfledger\n")
    paths = [p for p, item in client.get("/openapi.json").json()["paths"].items() if "get" in item]
    assert all(f"- [{p}]({p})" in text for p in paths)
    assert "/mcp/" in text and "evidence" in text


def test_the_claim_checks_tool_takes_division_and_availability(app):
    async def main():
        async with Client(mcp_server.build(app)) as c:
            wide = await c.call_tool("claim_checks", {"division": ["all"],
                                                      "availability": ["all"], "limit": 1000})
            bad = await c.call_tool("claim_checks", {"availability": ["someday"]})
            return wide.structured_content, bad.structured_content

    wide, bad = run(main())
    assert wide["total"] == len(wide["rows"]) > 0
    assert bad["error"]["status"] == 422 and bad["error"]["param"] == "availability"
