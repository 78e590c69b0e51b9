"""Load the curated files into their tables; keep edited and withdrawn claims' history."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from ingest.context import CURATED_DATA, LoadContext, SourceConfig
from ingest.curated.parse import PARSER_VERSION, SOURCE, check_file, read_files, rows
from ingest.versions import history_row, superseded
from warehouse.model.vocabulary import SourceStatus
from warehouse.storage.db import insert_rows, scalar

TABLES = ("claim", "hardware", "hardware_spec", "model_shape", "accelerator_alias")


class CuratedConfig(SourceConfig):
    """Curated files reviewed like code (claims, hardware, models, aliases)."""

    dir: str | None = None  # unset: the checkout's own data/ (see CURATED_DATA)


def load(ctx: LoadContext) -> None:
    """The curated files: all checked first; any bad file fails the source and loads nothing."""
    cfg = ctx.config
    assert isinstance(cfg, CuratedConfig)
    directory = Path(ctx.resolve(cfg.dir)) if cfg.dir else CURATED_DATA
    with ctx.fetching():
        raws = read_files(directory)
    unchanged = all(ctx.to_parse(r, ctx.previous(SOURCE, Path(r.url).name), PARSER_VERSION)
                    is None for r in raws)
    ctx.outcome.details["files"] = {Path(r.url).name: r.sha256[:12] for r in raws}
    if unchanged:
        ctx.outcome.status = SourceStatus.unchanged
        return
    today = date.fromisoformat(ctx.today) if ctx.today else None
    parsed = {Path(r.url).name: check_file(r, today) for r in raws}
    snapshots = {Path(r.url).name: ctx.record(r, kind="curated_file", label=Path(r.url).name,
                                              parser_version=PARSER_VERSION)
                 for r in raws}
    tables = rows(parsed, snapshots)
    _keep_claim_history(ctx, tables["claim"])
    for table in TABLES:
        old = scalar(ctx.con, f"SELECT count(*) FROM {table}")  # noqa: S608
        ctx.check_shrink(f"curated {table}", old, len(tables[table]))
        ctx.con.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
        insert_rows(ctx.con, table, tables[table])
    ctx.outcome.rows = sum(len(v) for v in tables.values())
    ctx.outcome.status = SourceStatus.updated


def _keep_claim_history(ctx: LoadContext, new_claims: list[dict]) -> None:
    """Before claims are replaced: keep each edited claim's old version and each withdrawn
    claim, with the dates, in claim_history."""
    compared = ("vendor", "product", "model", "metric", "value", "unit", "evidence", "claimed_on",
                "checked_on", "source_url", "quote", "conditions", "accelerator_id", "note")
    now = ctx.now()  # never before a stored fetch (the store's newest time is its floor)
    history = [{**history_row(old, fetched, now, "withdrawn" if gone else "edited"),
                "claim_id": old["id"], "value": old["value"], "claimed_on": old["claimed_on"],
                "checked_on": old["checked_on"]}
               for old, fetched, gone in superseded(
                   ctx.con, "SELECT c.*, s.fetched_at AS _fetched FROM claim c LEFT JOIN "
                   "source_snapshot s ON s.id = c.source_snapshot_id", [],
                   {c["id"]: c for c in new_claims}, compared)]
    insert_rows(ctx.con, "claim_history", history)
    ctx.outcome.details["claims_edited"] = sum(h["status"] == "edited" for h in history)
    ctx.outcome.details["claims_withdrawn"] = sum(h["status"] == "withdrawn" for h in history)
