"""Load MLPerf rounds into ``mlperf_result``, and map accelerator spellings to ids."""

from __future__ import annotations

import re
import time
from collections import Counter
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from ingest.context import LoadContext, SourceConfig
from ingest.mirror import carried, fetch_pinned
from ingest.mlperf.parse import PARSER_VERSION, SOURCE, ParseReport, parse
from ingest.versions import history_row, superseded
from warehouse.exceptions import ParseError, PerfledgerError, SourceError
from warehouse.model.vocabulary import Revision, SourceStatus, normalise_model
from warehouse.redact import redact
from warehouse.storage.db import fetch_dicts, insert_rows, scalar

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class PinnedRound(BaseModel):
    """A round's file at a pinned commit: its URL and the sha256 its bytes must have."""

    model_config = ConfigDict(extra="forbid")

    url: str
    sha256: Sha256 | None = Field(None, description="sha256 of the file's bytes: other bytes are "
                                  "refused, and the built-in mirror's copy with it stands in "
                                  "when the fetch fails.")


_PINNED = "https://raw.githubusercontent.com/mlcommons/inference_results_{round}/{commit}/{file}"
DEFAULT_ROUNDS: dict[str, PinnedRound] = {  # pinned commits keep provenance exact (and
    # let the built-in mirror stand in offline); the format is read from the bytes
    "v4.1": PinnedRound(
        url=_PINNED.format(round="v4.1", commit="4a0c87411066bd697db46fa44cf6f04fd458f627",
                           file="summary_results.json"),
        sha256="8ec7a5b032f7d51c57de04bc04b7e9c94bdc8cd707ab4f4b84f921263e38f51a"),
    "v5.1": PinnedRound(
        url=_PINNED.format(round="v5.1", commit="029742c79b1ec561e2f5a25d7daa585d2beebde1",
                           file="summary_results.json"),
        sha256="68c19b46cf5a87f535beae81154d61c3d981fe850ae3d09af530c769b6e0cc68"),
    "v6.0": PinnedRound(
        url=_PINNED.format(round="v6.0", commit="ab33b2144a9f822f69d24f78569f993d195ee7e5",
                           file="summary_results.json"),
        sha256="52fa813a27834e8de38eca9fd381688df1cf9cd95020d2bd9e951f6cc16384ae"),
    "v6.1": PinnedRound(
        url=_PINNED.format(round="v6.1", commit="7bf15fd8089655a71fb75c81a744d7ba5a632424",
                           file="summary.csv"),
        sha256="87980a2dfba85139ca806b63634305bcbc4ad6803bf2d520351e022ba905065a"),
}


class MlperfConfig(SourceConfig):
    """MLPerf Inference summaries, one per round: a URL, or ``{ url, sha256 }`` for a file
    pinned to a commit."""

    rounds: dict[str, PinnedRound] = Field(default_factory=lambda: dict(DEFAULT_ROUNDS))
    builtin_mirror: bool = Field(True, description="When a pinned round's fetch fails, read the "
                                 "copy perfledger carries (same sha256), if it carries one.")

    @field_validator("rounds", mode="before")
    @classmethod
    def _plain_urls(cls, rounds: object) -> object:
        """A round given as a plain URL has no pin; anything else must be ``{ url, sha256 }``."""
        if not isinstance(rounds, dict):
            return rounds
        for name, spec in rounds.items():
            if not isinstance(spec, str | dict | PinnedRound):
                raise ValueError(f"round {name!r}: a URL or {{ url = ..., sha256 = ... }}, "
                                 f"not {spec!r}")
        return {name: {"url": spec} if isinstance(spec, str) else spec
                for name, spec in rounds.items()}


def load(ctx: LoadContext) -> None:
    """Each configured round on its own: fetch, parse (format recognised from the content),
    check, and replace that round's rows. A round that fails (unreachable with no carried copy,
    unparseable, empty, shrunk) keeps its last good rows and is named stale; the other rounds
    still land."""
    cfg = ctx.config
    assert isinstance(cfg, MlperfConfig)
    written = 0
    for round_name, pin in cfg.rounds.items():
        detail: dict = {"url": redact(ctx.resolve(pin.url))}
        ctx.outcome.details[round_name] = detail
        try:
            written += _load_round(ctx, round_name, ctx.resolve(pin.url), detail,
                                   sha256=pin.sha256, mirror=cfg.builtin_mirror)
        except PerfledgerError as e:
            detail.update(status=SourceStatus.failed, message=str(e))
            if isinstance(e, SourceError) and e.excerpt:
                ctx.outcome.excerpts[round_name] = e.excerpt
            # named once: "v5.1: <why>", not "mlperf: …" or "mlperf v5.1: …" again
            why = re.sub(rf"^{SOURCE}(?: {re.escape(round_name)})?:\s*", "", str(e))
            ctx.outcome.stale[round_name] = why
            if not scalar(ctx.reader, "SELECT count(*) FROM mlperf_result WHERE round = ?",
                          [round_name]):
                ctx.outcome.unloaded.add(round_name)  # nothing kept: said, not "last good"
    if ctx.outcome.stale and len(ctx.outcome.stale) == len(cfg.rounds):
        raise SourceError("; ".join(f"{r}: {why}" for r, why in ctx.outcome.stale.items()),
                          source=SOURCE)
    ctx.outcome.finish(written)
    mirrored = [r for r, d in ctx.outcome.details.items() if "source" in d]
    if mirrored:  # said on the source's summary line, not only in the report
        ctx.outcome.message = "; ".join(filter(None, [
            ctx.outcome.message, f"{', '.join(mirrored)} read from the built-in mirror's carried "
            "copies (the network fetch failed)"]))


def _load_round(ctx: LoadContext, round_name: str, url: str, detail: dict, *,
                sha256: str | None, mirror: bool) -> int:
    """One round; returns the rows written (0 when its file has not changed)."""
    prev = ctx.previous(SOURCE, round_name)
    started = time.perf_counter()
    raw = fetch_pinned(ctx, url, SOURCE, prev, what=round_name, sha256=sha256, mirror=mirror)
    now = ctx.fetched(raw)  # this run's fetch (a re-read below may be prev's bytes and time)
    detail["fetch_seconds"] = round(time.perf_counter() - started, 3)
    if carried(raw):  # the network failed; the built-in mirror stood in
        detail["source"] = raw.url
    fresh = ctx.to_parse(raw, prev, PARSER_VERSION)
    if fresh is None:
        detail["status"] = "unchanged (304)" if raw.not_modified else "unchanged (same sha256)"
        return 0
    raw = fresh
    report = ParseReport()
    started = time.perf_counter()
    rows = list(parse(raw, round_name=round_name, snapshot_id=ctx.snapshot_id(raw, round_name),
                      report=report))
    detail["parse_seconds"] = round(time.perf_counter() - started, 3)
    ctx.outcome.warnings.extend(report.warnings)
    if not rows:
        raise ParseError(f"{SOURCE} {round_name}: the file has no results", source=SOURCE)
    wrong_round = {r["round"] for r in rows} - {round_name}
    if wrong_round:
        ctx.outcome.warnings.append(
            f"{SOURCE} {round_name}: the file has rows for round(s) {sorted(wrong_round)}; "
            "kept under their published version")
    rounds = sorted({r["round"] for r in rows} | {round_name})
    old = scalar(ctx.reader, "SELECT count(*) FROM mlperf_result WHERE list_contains(?, round)",
                 [rounds])
    ctx.check_shrink(f"{SOURCE} {round_name}", old, len(rows))
    ctx.check_growth(f"{SOURCE} {round_name}", old, len(rows))
    # The stored ids as this parser spells them: a spelling it now merges (v6.0 HPE's resnet,
    # now resnet50) is the same model, not one gone from the file.
    before = {(normalise_model(m), s) for m, s in ctx.reader.execute(
        "SELECT DISTINCT model_id, scenario FROM mlperf_result WHERE list_contains(?, round)",
        [rounds]).fetchall()}
    ctx.check_entities(f"{SOURCE} {round_name}: models and scenarios", before,
                       {(r["model_id"], r["scenario"]) for r in rows})
    if prev is not None and prev["sha256"] == raw.sha256:  # re-read by a newer parser (before
        # ``record`` moves the bytes' fetch time to this fetch: the versions' own stay)
        detail["renamed"] = _keep_renames(ctx, rows, ctx.snapshot_id(raw, round_name), now)
    ctx.record(raw, kind="mlperf_summary", label=round_name, parser_version=PARSER_VERSION)
    if prev is not None and prev["sha256"] != raw.sha256:  # re-published, not re-read
        detail.update(_keep_revisions(ctx, rows, rounds, ctx.fetched(raw)))
    ctx.con.execute("DELETE FROM mlperf_result WHERE list_contains(?, round)", [rounds])
    insert_rows(ctx.con, "mlperf_result", rows)
    detail.update(status=SourceStatus.updated, rows=len(rows), sha256=raw.sha256,
                  format=rows[0]["source_format"])
    return len(rows)


# What a re-published round revises: the figures its publisher wrote (a parser's readings of
# them, such as the accelerator id, are not the publisher's revision).
PUBLISHED = ("result", "accuracy", "number_of_nodes", "accelerators_per_node",
             "total_accelerators", "accelerator_model_name", "system_name",
             "host_processor_model_name", "availability")


# The stored rows of some rounds (of one file's bytes), each with when its file was fetched.
_STORED = ("SELECT r.*, s.fetched_at AS _fetched FROM mlperf_result r LEFT JOIN source_snapshot s "
           "ON s.id = r.source_snapshot_id WHERE ")
STORED = _STORED + "list_contains(?, r.round)"
STORED_FROM = _STORED + "r.source_snapshot_id = ?"


def _revision(old: dict, valid_from: datetime | None, at: datetime, status: Revision,
              renamed_to: str | None = None) -> dict:
    """A stored result kept in mlperf_result_revision as it was until ``at``."""
    return {**history_row(old, valid_from, at, status), "result_id": old["id"],
            "round": old["round"], "result": old["result"], "units": old["units"],
            "renamed_to": renamed_to}


def _keep_revisions(ctx: LoadContext, rows: list[dict], rounds: list[str],
                    fetched: datetime) -> dict[str, int]:
    """Before a re-published round's rows replace the stored ones: keep each result whose
    published figures changed, and each the file no longer has, with the dates, in
    mlperf_result_revision; returns how many of each."""
    history = [_revision(old, valid_from, fetched,
                         Revision.withdrawn if gone else Revision.revised)
               for old, valid_from, gone in superseded(
                   ctx.con, STORED, [rounds], {r["id"]: r for r in rows}, PUBLISHED)]
    insert_rows(ctx.con, "mlperf_result_revision", history)
    return {"revised": sum(h["status"] == Revision.revised for h in history),
            "withdrawn": sum(h["status"] == Revision.withdrawn for h in history)}


def _keep_renames(ctx: LoadContext, rows: list[dict], snapshot_id: str, at: datetime) -> int:
    """Before the same file's rows, read by a newer parser, replace the ones stored from it
    (``snapshot_id``): keep each stored result it gives another id (v6.0 HPE's ``resnet``
    became ``resnet50``, and the model is part of the id) in mlperf_result_revision as
    renamed, pointing at its new id, so a link to the old one still leads to it. A row is the
    same row by its place in the file (round, row_number, is_power); a place two new rows
    share names no one. Returns how many."""
    places = Counter(_place(r) for r in rows)
    new = {_place(r): r["id"] for r in rows if places[_place(r)] == 1}
    history = []
    for old in fetch_dicts(ctx.con, STORED_FROM, [snapshot_id]):
        valid_from, to = old.pop("_fetched"), new.get(_place(old))
        if to is not None and to != old["id"]:
            history.append(_revision(old, valid_from, at, Revision.renamed, renamed_to=to))
    insert_rows(ctx.con, "mlperf_result_revision", history)
    return len(history)


def _place(row: dict) -> tuple:
    """Where a result stands in its round's file."""
    return row["round"], row["row_number"], bool(row["is_power"])
