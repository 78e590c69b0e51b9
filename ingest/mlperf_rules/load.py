"""Load the MLPerf rules document's latency limits into ``benchmark_rule`` (every version
kept) and the per-round pins into ``rule_pin``."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints, model_validator

from ingest.context import LoadContext, SourceConfig
from ingest.mirror import carried, fetch_pinned
from ingest.mlperf_rules.parse import PARSER_VERSION, SOURCE, parse
from warehouse.model.vocabulary import SourceStatus
from warehouse.redact import redact
from warehouse.storage.db import insert_rows

# The rules document at a pinned commit (the master branch's head when pinned): pinned bytes let
# the built-in mirror stand in offline. A new round's rules arrive by moving the pin.
DEFAULT_URL = ("https://raw.githubusercontent.com/mlcommons/inference_policies/"
               "ac93e89c0c9a8819eb0ad987768c2f6e22896714/inference_rules.adoc")
DEFAULT_SHA256 = "32225e95dec03e398495610a685e5cad80bc86cdf8d689f31707ef85bbe97e66"


class RulesConfig(SourceConfig):
    """The MLPerf Inference rules document, and optional per-round pins to a document sha256."""

    url: str = DEFAULT_URL
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")] | None = Field(
        DEFAULT_SHA256, description="sha256 the document at url must have (a pinned commit's "
        "file): other bytes are refused, and the built-in mirror's copy with it stands in when "
        "the fetch fails. A url given without it has no pin.")
    builtin_mirror: bool = Field(True, description="When the pinned document's fetch fails, read "
                                 "the copy perfledger carries (same sha256), if it carries one.")
    round_pins: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _pin_belongs_to_its_url(self) -> RulesConfig:
        if "url" in self.model_fields_set and "sha256" not in self.model_fields_set:
            self.sha256 = None  # the default pin is the default URL's, not another file's
        return self


def load(ctx: LoadContext) -> None:
    """The MLPerf rules document: every version's limits are kept; pins choose one per round."""
    cfg = ctx.config
    assert isinstance(cfg, RulesConfig)
    url = ctx.resolve(cfg.url)
    prev = ctx.previous(SOURCE, "rules")
    raw = fetch_pinned(ctx, url, SOURCE, prev, what="rules", sha256=cfg.sha256,
                       mirror=cfg.builtin_mirror)
    if carried(raw):  # the network failed; the built-in mirror stood in
        ctx.outcome.details["source"] = raw.url
        ctx.outcome.message = "read from the built-in mirror's carried copy (the network fetch failed)"
    ctx.outcome.details["url"] = redact(url)
    pins = [{"round": r, "sha256": sha} for r, sha in cfg.round_pins.items()]
    current_pins = sorted(tuple(r) for r in ctx.reader.execute(
        "SELECT round, sha256 FROM rule_pin").fetchall())
    pins_changed = current_pins != sorted((p["round"], p["sha256"]) for p in pins)
    if pins_changed:
        ctx.con.execute("DELETE FROM rule_pin")
        insert_rows(ctx.con, "rule_pin", pins)
    fresh = ctx.to_parse(raw, prev, PARSER_VERSION)
    if fresh is None:
        ctx.outcome.status = SourceStatus.updated if pins_changed else SourceStatus.unchanged
        return
    raw = fresh
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
    ctx.outcome.status = SourceStatus.updated
