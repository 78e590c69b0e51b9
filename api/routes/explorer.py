"""The explorer page at ``/``: static files built only on the public /v1 API. The chart
library is the plotly.min.js that the `plotly` package installs (PyPI), served from here, so
the page needs no internet at run time."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

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
