"""Load the MLPerf rules document's latency limits into ``benchmark_rule`` (every version
kept) and the per-round pins into ``rule_pin``."""

from __future__ import annotations

from pydantic import Field

from ingest.context import LoadContext, SourceConfig
from ingest.mlperf_rules.parse import PARSER_VERSION, SOURCE, parse
from warehouse.db import insert_rows
from warehouse.redact import redact

DEFAULT_URL = (
    "https://raw.githubusercontent.com/mlcommons/inference_policies/master/inference_rules.adoc"
)


class RulesConfig(SourceConfig):
    """The MLPerf Inference rules document, and optional per-round pins to a document sha256."""

    url: str = DEFAULT_URL
    round_pins: dict[str, str] = Field(default_factory=dict)


def load(ctx: LoadContext) -> None:
    """The MLPerf rules document: every version's limits are kept; pins choose one per round."""
    cfg = ctx.config
    assert isinstance(cfg, RulesConfig)
    url = ctx.resolve(cfg.url)
    prev = ctx.previous(SOURCE, "rules")
    raw = ctx.fetch(url, SOURCE, prev)
    ctx.outcome.details["url"] = redact(url)
    pins = [{"round": r, "sha256": sha} for r, sha in cfg.round_pins.items()]
    current_pins = sorted(tuple(r) for r in ctx.reader.execute(
        "SELECT round, sha256 FROM rule_pin").fetchall())
    pins_changed = current_pins != sorted((p["round"], p["sha256"]) for p in pins)
    if pins_changed:
        ctx.con.execute("DELETE FROM rule_pin")
        insert_rows(ctx.con, "rule_pin", pins)
    if raw.not_modified or (prev and prev["sha256"] == raw.sha256):
        ctx.outcome.status = "updated" if pins_changed else "unchanged"
        return
    snapshot_id = ctx.record(raw, kind="rules_document", label="rules",
                             parser_version=PARSER_VERSION)
    rows = list(parse(raw, snapshot_id=snapshot_id))
    if prev:
        old = set(ctx.reader.execute("SELECT model_family, scenario FROM benchmark_rule "
                                     "WHERE source_snapshot_id = ?", [prev["id"]]).fetchall())
        ctx.check_entities(f"{SOURCE}: latency limits", old,
                           {(r["model_family"], r["scenario"]) for r in rows})
        ctx.check_shrink(SOURCE, len(old), len(rows))
        ctx.check_growth(SOURCE, len(old), len(rows))
    ctx.con.execute("DELETE FROM benchmark_rule WHERE source_snapshot_id = ?", [snapshot_id])
    insert_rows(ctx.con, "benchmark_rule", rows)
    ctx.outcome.rows = len(rows)
    ctx.outcome.details["sha256"] = raw.sha256
    ctx.outcome.status = "updated"
