"""One round's summary file → ``mlperf_result`` rows, whichever format MLCommons published.

The format is recognised from the content, never from the URL: a JSON list of objects is
``summary_results.json`` (``json_format``), a CSV header with MLPerf's columns is
``summary.csv`` (``csv_format``); anything else is an error naming the round and what was
found. Both yield the same columns (``rows``).
"""

from __future__ import annotations

from collections.abc import Iterator

from ingest import jsonsafe
from ingest.http import Raw
from ingest.mlperf import csv_format, json_format
from ingest.mlperf.links import location_url, results_tree
from ingest.mlperf.rows import PARSER_VERSION, SOURCE, ParseReport
from warehouse.exceptions import ParseError
from warehouse.redact import redact_excerpt

__all__ = ["PARSER_VERSION", "SOURCE", "ParseReport", "detect", "parse"]


def detect(text: str) -> str:
    """``json`` or ``csv`` from the content; ``ValueError`` otherwise (``parse`` says why)."""
    start = text.lstrip()[:1]
    if start in ("[", "{"):
        return "json"
    if csv_format.looks_like(text):
        return "csv"
    raise ValueError


def parse(raw: Raw, *, round_name: str, snapshot_id: str,
          report: ParseReport | None = None) -> Iterator[dict]:
    """Typed rows of one round's file (see the module docstring). A row whose file publishes
    no details link (every summary.csv row) gets its ``Location`` directory in the upstream
    repository at the file's commit, where that commit is known (``links``)."""
    tree = results_tree(raw)
    for row in _parse(raw, round_name=round_name, snapshot_id=snapshot_id, report=report):
        row["details_url"] = row.get("details_url") or location_url(tree, row.get("location"))
        yield row


def _parse(raw: Raw, *, round_name: str, snapshot_id: str,
           report: ParseReport | None) -> Iterator[dict]:
    report = report if report is not None else ParseReport()
    where = f"{SOURCE} {round_name}"
    try:
        text = raw.body.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ParseError(f"{where}: not UTF-8 text at byte {e.start}", source=SOURCE) from None
    if not text.strip():
        raise ParseError(f"{where}: the file is empty", source=SOURCE)
    try:
        kind = detect(text)
    except ValueError:
        # The bytes are not quoted in the message, which reaches the run record and the public
        # endpoints (an internal page a redirect reached may hold secrets); the excerpt goes
        # only to the CLI and the server log, redacted.
        raise ParseError(f"{where}: neither a JSON list of result objects nor a summary CSV "
                         f"({len(raw.body)} bytes; how the file starts is in the refresh log)",
                         source=SOURCE, excerpt=redact_excerpt(text)) from None
    if kind == "csv":
        yield from csv_format.parse(text, round_name=round_name, snapshot_id=snapshot_id,
                                    report=report)
        return
    try:
        data = jsonsafe.loads(text)
    except jsonsafe.JSONRefused as e:  # malformed, a key given twice, too deep, not finite
        raise ParseError(f"{where}: the JSON {e}", source=SOURCE) from None
    if not isinstance(data, list):
        found = f"an object with keys {', '.join(list(data)[:5])}" if isinstance(data, dict) \
            else type(data).__name__
        raise ParseError(f"{where}: JSON but not a list of result objects (found {found})",
                         source=SOURCE)
    yield from json_format.parse(data, round_name=round_name, snapshot_id=snapshot_id,
                                 report=report)
