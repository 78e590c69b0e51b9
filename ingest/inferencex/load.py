"""Load InferenceX observations into ``inferencex_observation``: versioned, history kept.

A refresh reads the alias file, the availability listing (which raw model keys have data),
then ``/api/v1/benchmarks?model=<display name>[&date=<as_of>]`` once per display name. A row
(``observation_key``) is stored as versions, as prices are: a row not seen before is added; a
row whose published values changed (``content_sha256``) closes its current version
(``valid_to``) and adds a new one; nothing is deleted. A version's id is the key for the
first version, and the key, ``~`` and how many versions the key had before for a revision
(``key~2``: the ordinal, as ``ingest.versions`` numbers price versions with ``ordinal_ids``), so
a row revised back to values it once had is a new version with an id of its own; revisions
stored before ids carried the ordinal keep theirs (``key~<sha256[:12]>``). A row the
same request used to list and no longer does, while it lists the same configuration at the
same or an earlier date, is marked ``withdrawn_at`` (a configuration's newer run superseding
it is the normal course and marks nothing). The bytes of every response that publishes are
stored. Each model loads on its own: one the API refuses (``400 {"error":"Unknown model"}``)
or whose answer cannot be read is that model's failure, named in the run's message, and the
others load; the source fails only when every model does.
"""

from __future__ import annotations

import dataclasses
from datetime import date
from urllib.parse import quote

from pydantic import Field

from ingest.context import CURATED_DATA, LoadContext, SourceConfig
from ingest.http import Raw
from ingest.inferencex.aliases import parse_aliases
from ingest.inferencex.parse import (
    NATURAL_KEY,
    PARSER_VERSION,
    SOURCE,
    ParseReport,
    content_sha256,
    parse_availability,
    parse_benchmarks,
)
from ingest.mirror import fetch_or_carried
from warehouse.exceptions import PerfledgerError, SourceError
from warehouse.model.vocabulary import SourceStatus
from warehouse.redact import redact
from warehouse.storage.db import fetch_dicts, insert_rows, scalar

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
    builtin_mirror: bool = Field(True, description="When InferenceX cannot be reached, read the "
                                 "answers perfledger carries (ingest/mirror/inferencex) for the "
                                 "requests they answer; false: fail instead.")


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
    avail, _ = fetch_or_carried(ctx, _url(base, "/api/v1/availability"), SOURCE, None,
                                request="/api/v1/availability", mirror=cfg.builtin_mirror)
    keys = cfg.models or parse_availability(avail)
    ctx.outcome.details["availability"] = {"url": redact(avail.url), "model_keys": keys}
    wanted: dict[str, list[str]] = {}
    for key in keys:
        if key in displays:
            wanted.setdefault(displays[key], []).append(key)
    unlisted = [k for k in keys if k not in displays]  # available upstream, not fetched
    ctx.outcome.details["models_without_display_name"] = unlisted
    report = ParseReport()
    added = 0
    for display, raw_keys in wanted.items():
        detail: dict = {"keys": raw_keys}
        ctx.outcome.details[display] = detail
        try:
            added += _load_model(ctx, cfg, display, report, detail)
        except PerfledgerError as e:
            why = str(e).removeprefix(f"{SOURCE}: ")
            detail.update(status=SourceStatus.failed, message=why)
            ctx.outcome.stale[f"model {display}"] = why
            if not scalar(ctx.reader, "SELECT count(*) FROM inferencex_observation "
                          "WHERE model_display = ?", [display]):
                ctx.outcome.unloaded.add(f"model {display}")
    if wanted and len(ctx.outcome.stale) == len(wanted):
        raise SourceError("; ".join(f"{m}: {why}" for m, why in ctx.outcome.stale.items()),
                          source=SOURCE)
    if report.unknown_fields:
        ctx.outcome.warnings.append(
            f"{SOURCE}: fields the publisher's schema does not document, kept in extras: "
            + ", ".join(sorted(report.unknown_fields)))
    if report.duplicates:
        ctx.outcome.warnings.append(f"{SOURCE}: {report.duplicates} repeated row id(s) in a "
                                    "response; the first kept")
    ctx.outcome.wrote = wrote
    ctx.outcome.finish(added)
    mirrored = [m for m, d in ctx.outcome.details.items() if isinstance(d, dict) and "source" in d]
    ctx.outcome.message = "; ".join(filter(None, [
        ctx.outcome.message, _unmapped(ctx),
        f"{', '.join(mirrored)} read from the built-in mirror's carried copies (InferenceX "
        "could not be reached)" if mirrored else "",
        f"model key(s) {', '.join(unlisted)} listed as available but without a display name "
        "in data/inferencex.yaml: not fetched (add them to fetch them)" if unlisted else ""]))


def _load_model(ctx: LoadContext, cfg: InferencexConfig, display: str, report: ParseReport,
                detail: dict) -> int:
    """One model's answer fetched (or, offline, its carried copy) and, when it changed, its
    versions written; rows written."""
    as_of = cfg.as_of.isoformat() if cfg.as_of else None
    params = {"model": display, **({"date": as_of} if as_of else {})}
    label = f"benchmarks:{display}:{as_of or 'latest'}"
    prev = ctx.previous(SOURCE, label)
    path = "/api/v1/benchmarks"
    raw, copy = fetch_or_carried(ctx, _url(cfg.base_url, path, **params), SOURCE, prev,
                                 request=_url("", path, **params), mirror=cfg.builtin_mirror)
    detail["url"] = redact(raw.url)
    if copy is not None:
        detail["source"] = raw.url
    fresh = ctx.to_parse(raw, prev, PARSER_VERSION)
    if fresh is None:
        detail["status"] = SourceStatus.unchanged
        return 0
    fresh = dataclasses.replace(fresh, fetched_at=ctx.fetched(fresh))  # the store's order
    return _add(ctx, fresh, display, label, cfg.as_of, report, detail,
                rows_key=copy.rows_key if copy else None)


def _unmapped(ctx: LoadContext) -> str:
    """Hardware and model keys of the observations that data/inferencex.yaml does not list, in
    the run report and in words for the run's message (the terminal line and /healthz)."""
    found = ctx.reader.execute(  # the staging file once this refresh wrote, else the current
        "SELECT kind, list(DISTINCT key ORDER BY key) FROM (SELECT 'hardware' AS kind, "
        "hardware_base AS key FROM inferencex_observation UNION ALL SELECT 'model', model "
        "FROM inferencex_observation) o WHERE NOT EXISTS (SELECT 1 FROM inferencex_alias a "
        "WHERE a.kind = o.kind AND a.key = o.key) GROUP BY kind ORDER BY kind").fetchall()
    ctx.outcome.details["unmapped_keys"] = dict(found)
    return "; ".join(f"unmapped {kind} key(s) {', '.join(keys)} (add them to "
                     "data/inferencex.yaml)" for kind, keys in found)


def _add(ctx: LoadContext, raw: Raw, display: str, label: str, as_of: date | None,
         report: ParseReport, detail: dict, rows_key: str | None = None) -> int:
    """Parse one response (its rows under ``rows_key`` for a carried export) and write its new
    rows, revisions and withdrawals; returns how many rows it wrote."""
    snapshot_id = ctx.snapshot_id(raw, label)
    rows = list(parse_benchmarks(raw, display=display, snapshot_id=snapshot_id, as_of=as_of,
                                 report=report, rows_key=rows_key))
    current = _current(ctx, rows)
    fresh, revised = [], []
    for row in rows:
        old = current.get(row["observation_key"])
        if old is None:
            fresh.append(row)
        elif (old["content_sha256"] or content_sha256(old)) != row["content_sha256"]:
            row["id"] = f"{row['observation_key']}~{old['versions_before']}"
            revised.append((old["id"], row))
    withdrawn = _withdrawn(ctx, rows, display, as_of)
    detail.update(rows=len(rows), new=len(fresh), revised=len(revised), withdrawn=len(withdrawn),
                  kept=len(rows) - len(fresh) - len(revised), sha256=raw.sha256)
    if not (fresh or revised or withdrawn):
        detail["status"] = "no new observations"
        return 0
    ctx.changing()
    ctx.record(raw, kind="inferencex_benchmarks", label=label, parser_version=PARSER_VERSION)
    fetched = raw.fetched_at
    if revised:
        ctx.con.execute("UPDATE inferencex_observation SET valid_to = ? WHERE "
                        "list_contains(?::VARCHAR[], id)", [fetched, [i for i, _ in revised]])
    if withdrawn:
        ctx.con.execute("UPDATE inferencex_observation SET withdrawn_at = ? WHERE "
                        "list_contains(?::VARCHAR[], id)", [fetched, withdrawn])
    insert_rows(ctx.con, "inferencex_observation", fresh + [r for _, r in revised])
    detail["status"] = SourceStatus.updated
    return len(fresh) + len(revised) + len(withdrawn)


def _current(ctx: LoadContext, rows: list[dict]) -> dict[str, dict]:
    """The open version of each row's key, by key, with ``versions_before``: how many versions
    the key has stored (the ordinal its next version's id carries; nothing is deleted, so it
    only grows and no two versions of a key share it, whatever their content)."""
    if not rows:
        return {}
    found = fetch_dicts(ctx.reader, (
        "SELECT * FROM (SELECT *, count(*) OVER (PARTITION BY observation_key) AS "
        "versions_before FROM inferencex_observation WHERE list_contains(?::VARCHAR[], "
        "observation_key)) WHERE valid_to IS NULL"), [[r["observation_key"] for r in rows]])
    return {r["observation_key"]: r for r in found}


# What makes one configuration of a request's answer: a sweep point's natural key without
# what varies along the sweep (conc) or between its runs (date, run_url).
CONFIG = tuple(c for c in NATURAL_KEY if c not in ("conc", "date", "run_url"))


def _withdrawn(ctx: LoadContext, rows: list[dict], display: str, as_of: date | None) -> list[str]:
    """Ids of the current versions this request listed before and lists no more, while it
    lists their configuration at the same or an earlier date."""
    listed = {r["observation_key"] for r in rows}
    latest: dict[tuple, date] = {}
    for r in rows:
        key = tuple(r[c] for c in CONFIG)
        latest[key] = max(latest.get(key, r["observed_on"]), r["observed_on"])
    stored = fetch_dicts(ctx.reader, (
        "SELECT * FROM inferencex_observation WHERE valid_to IS NULL AND withdrawn_at IS NULL "
        "AND model_display = ? AND requested_as_of IS NOT DISTINCT FROM ?"), [display, as_of])
    return [s["id"] for s in stored if s["observation_key"] not in listed
            and tuple(s[c] for c in CONFIG) in latest
            and latest[tuple(s[c] for c in CONFIG)] <= s["observed_on"]]


def _load_aliases(ctx: LoadContext, path: str) -> bool:
    """Replace the alias rows when the file changed; True when it did."""
    prev = ctx.previous(SOURCE, "aliases")
    raw = ctx.to_parse(ctx.fetch(path, SOURCE, prev), prev, PARSER_VERSION)
    if raw is None:
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
