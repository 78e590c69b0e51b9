"""Where a round's results live upstream, so every row can be cited: the repository and commit
the summary file is the one of, and a result's directory in that tree.

MLCommons' JSON summaries publish each system's details link (``Details``); the CSV summary
publishes none, only ``Location``, the result's directory relative to the summary file. A row
without a published link gets that directory in the repository at the commit its file is
known to be from: the commit of the built-in mirror's copy with the same sha256, or the commit
a ``raw.githubusercontent.com`` URL pins (a 40-hex commit, never a branch, which moves). For any
other file (a local copy with other bytes, a branch URL) the link stays NULL, never guessed.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from ingest.http import Raw
from ingest.mirror import CARRIED_PREFIX, carried_copy

_RAW_GITHUB = re.compile(r"^https://raw\.githubusercontent\.com/(?P<repo>[^/]+/[^/]+)/"
                         r"(?P<commit>[0-9a-f]{40})/(?P<path>.*)$")


def results_tree(raw: Raw) -> str | None:
    """The GitHub tree URL of the directory the summary file sits in, at the commit the bytes
    are known to be from (see the module docstring); None when that is not known."""
    copy = carried_copy(raw.sha256)
    url = copy.upstream if copy is not None else raw.url.removeprefix(CARRIED_PREFIX)
    parts = urlsplit(url)  # the path alone: never a query string or fragment
    m = _RAW_GITHUB.match(f"{parts.scheme}://{parts.netloc}{parts.path}")
    if m is None:
        return None
    folder = m["path"].rpartition("/")[0]
    return f"https://github.com/{m['repo']}/tree/{m['commit']}" + (f"/{folder}" if folder else "")


def location_url(tree: str | None, location: str | None) -> str | None:
    """``location`` (a path relative to the summary file, e.g. ``./closed/AMD/results/…``) as a
    URL in ``tree``; None when either is unknown or the path leaves the tree."""
    if tree is None or not location or not location.strip():
        return None
    parts = [p for p in location.strip().replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return f"{tree}/{'/'.join(quote(p) for p in parts)}"
