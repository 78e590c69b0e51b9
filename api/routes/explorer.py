"""The explorer page at ``/``: static files built only on the public /v1 API. The chart
library is the plotly.min.js that the `plotly` package installs (PyPI), served from here, so
the page needs no internet at run time."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, PlainTextResponse

STATIC = Path(__file__).resolve().parent.parent / "static"
router = APIRouter(include_in_schema=False)


def _plotly() -> Path | None:
    try:
        import plotly
    except ImportError:
        return None
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    return path if path.exists() else None


@router.get("/")
def index() -> FileResponse:
    """The explorer page."""
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8",
                        headers={"Cache-Control": "no-cache"})


@router.get("/static/vendor/plotly.min.js")
def plotly_js() -> FileResponse:
    """The chart library, from the installed plotly package."""
    path = _plotly()
    if path is None:
        raise HTTPException(404, "plotly is not installed; run `make setup`")
    return FileResponse(path, media_type="text/javascript",
                        headers={"Cache-Control": "public, max-age=86400"})


@router.get("/llms.txt")
def llms_txt(request: Request) -> PlainTextResponse:
    """The API described for agents (llmstxt.org form), from the OpenAPI document itself."""
    from api.mcp import INSTRUCTIONS

    schema = request.app.openapi()
    lines = [f"# {schema['info']['title']}", "", f"> {schema['info']['description']}", "",
             INSTRUCTIONS, "",
             "Read-only. Lists take limit/offset/sort/columns and format=json|csv|ndjson|parquet; "
             "errors are {\"error\": {\"status\", \"code\", \"message\", \"param\"}}. "
             "MCP (streamable HTTP): /mcp/ ; stdio: `perfledger mcp`. Full schema: /openapi.json",
             "", "## Endpoints", ""]
    for path, item in schema["paths"].items():
        op = item.get("get")
        if op:
            params = ", ".join(p["name"] for p in op.get("parameters", []))
            lines.append(f"- [{path}]({path}): {op.get('summary', '')}"
                         + (f" (parameters: {params})" if params else ""))
    return PlainTextResponse("\n".join(lines) + "\n", headers={"Cache-Control": "no-cache"})
