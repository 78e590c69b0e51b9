"""Load InferenceX observations into ``inferencex_observation``: append-only, history kept.

A refresh reads the alias file, the availability listing (which raw model keys have data),
then ``/api/v1/benchmarks?model=<display name>[&date=<as_of>]`` once per display name. Rows are
immutable: an id already stored is never rewritten, new ids are added, nothing is deleted
(a response that no longer lists an old run does not remove it). Any failure — a fetch, a
response that is not a list, a row missing a required field — fails the whole source, and
the rows of the last good refresh keep serving.
"""

from __future__ import annotations

from datetime import date
from urllib.parse import quote

from pydantic import Field

from ingest.context import CURATED_DATA, LoadContext, SourceConfig
from ingest.http import Raw
from ingest.inferencex.aliases import parse_aliases
from ingest.inferencex.parse import (
    PARSER_VERSION,
    SOURCE,
    ParseReport,
    parse_availability,
    parse_benchmarks,
)
from warehouse.db import insert_rows
from warehouse.redact import redact

DEFAULT_BASE_URL = "https://inferencex.semianalysis.com"


class InferencexConfig(SourceConfig):
    """SemiAnalysis InferenceX public API. Off unless the sources file turns it on: a sources
    file written before this source existed must not start calling a new third-party API."""

    enabled: bool = False
    base_url: str = Field(DEFAULT_BASE_URL, description="API host; /api/v1/... is appended.")
    models: list[str] = Field(default_factory=list, description="Raw model keys (dsr1, "
                              "gptoss120b); empty: every key the availability listing names.")
    as_of: date | None = Field(None, description="Ask for the data as of this date "
                               "(benchmarks?date=); none: the latest.")
    aliases: str | None = Field(None, description="Hardware and model key aliases (unset: the "
                                "checkout's own data/inferencex.yaml).")


def _url(base: str, path: str, **params: str) -> str:
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in params.items())
    return base.rstrip("/") + path + (f"?{query}" if query else "")


def load(ctx: LoadContext) -> None:
    """Aliases, availability, then each model's observations; new ids appended."""
    cfg = ctx.config
    assert isinstance(cfg, InferencexConfig)
    base = cfg.base_url
    wrote = _load_aliases(ctx, ctx.resolve(cfg.aliases) if cfg.aliases
                          else str(CURATED_DATA / "inferencex.yaml"))
    displays = dict(ctx.reader.execute(  # staging once the aliases were written, else current
        "SELECT key, display FROM inferencex_alias WHERE kind = 'model' AND display IS NOT NULL"
    ).fetchall())
    avail = ctx.fetch(_url(base, "/api/v1/availability"), SOURCE, None)
    keys = cfg.models or parse_availability(avail)
    ctx.outcome.details["availability"] = {"url": redact(avail.url), "model_keys": keys}
    wanted: dict[str, list[str]] = {}
    for key in keys:
        if key in displays:
            wanted.setdefault(displays[key], []).append(key)
        else:
            ctx.outcome.warnings.append(
                f"{SOURCE}: model key {key!r} has no display name in "
                f"{cfg.aliases or 'data/inferencex.yaml'}; not fetched (add it to fetch it)")
    as_of = cfg.as_of.isoformat() if cfg.as_of else None
    report = ParseReport()
    added = 0
    for display, raw_keys in wanted.items():
        params = {"model": display, **({"date": as_of} if as_of else {})}
        label = f"benchmarks:{display}:{as_of or 'latest'}"
        prev = ctx.previous(SOURCE, label)
        raw = ctx.fetch(_url(base, "/api/v1/benchmarks", **params), SOURCE, prev)
        detail: dict = {"url": redact(raw.url), "keys": raw_keys}
        ctx.outcome.details[display] = detail
        if raw.not_modified or (prev and prev["sha256"] == raw.sha256
                                and prev["parser_version"] == PARSER_VERSION):
            detail["status"] = "unchanged"
            continue
        added += _add(ctx, raw, display, label, cfg.as_of, report, detail)
    if report.unknown_fields:
        ctx.outcome.warnings.append(
            f"{SOURCE}: fields the publisher's schema does not document, kept in extras: "
            + ", ".join(sorted(report.unknown_fields)))
    if report.duplicates:
        ctx.outcome.warnings.append(f"{SOURCE}: {report.duplicates} repeated row id(s) in a "
                                    "response; the first kept")
    ctx.outcome.wrote = wrote
    ctx.outcome.finish(added)


def _add(ctx: LoadContext, raw: Raw, display: str, label: str, as_of: date | None,
         report: ParseReport, detail: dict) -> int:
    """Parse one response and append the rows whose ids are new; returns how many."""
    snapshot_id = ctx.snapshot_id(raw, label)
    rows = list(parse_benchmarks(raw, display=display, snapshot_id=snapshot_id, as_of=as_of,
                                 report=report))
    ids = [r["id"] for r in rows]
    known = {r[0] for r in ctx.reader.execute(
        "SELECT id FROM inferencex_observation WHERE list_contains(?::VARCHAR[], id)",
        [ids]).fetchall()} if ids else set()
    fresh = [r for r in rows if r["id"] not in known]
    detail.update(rows=len(rows), new=len(fresh), kept=len(rows) - len(fresh), sha256=raw.sha256)
    if not fresh:
        detail["status"] = "no new observations"
        return 0
    ctx.changing()
    ctx.record(raw, kind="inferencex_benchmarks", label=label, parser_version=PARSER_VERSION)
    insert_rows(ctx.con, "inferencex_observation", fresh)
    detail["status"] = "updated"
    return len(fresh)


def _load_aliases(ctx: LoadContext, path: str) -> bool:
    """Replace the alias rows when the file changed; True when it did."""
    prev = ctx.previous(SOURCE, "aliases")
    raw = ctx.fetch(path, SOURCE, prev)
    if raw.not_modified or (prev and prev["sha256"] == raw.sha256):
        return False
    name = path.rsplit("/", 1)[-1]
    snapshot_id = ctx.snapshot_id(raw, "aliases")
    rows = parse_aliases(raw, snapshot_id=snapshot_id, file=name)
    ctx.changing()
    ctx.record(raw, kind="inferencex_aliases", label="aliases", parser_version=PARSER_VERSION)
    ctx.con.execute("DELETE FROM inferencex_alias")
    insert_rows(ctx.con, "inferencex_alias", rows)
    ctx.outcome.details["aliases"] = {"file": name, "entries": len(rows), "sha256": raw.sha256}
    return True
