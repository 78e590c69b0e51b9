"""Load MLPerf rounds into ``mlperf_result``, and map accelerator spellings to ids."""

from __future__ import annotations

import re
import time

from pydantic import Field

from ingest.context import LoadContext, SourceConfig
from ingest.http import Raw
from ingest.mlperf.parse import PARSER_VERSION, SOURCE, ParseReport, parse
from warehouse.db import insert_rows, scalar
from warehouse.exceptions import ParseError, PerfledgerError, SourceError
from warehouse.redact import redact

_PINNED = "https://raw.githubusercontent.com/mlcommons/inference_results_{round}/{commit}/{file}"
DEFAULT_ROUNDS = {  # pinned commits keep provenance exact; the format is read from the bytes
    "v4.1": _PINNED.format(round="v4.1", commit="4a0c87411066bd697db46fa44cf6f04fd458f627",
                           file="summary_results.json"),
    "v5.1": _PINNED.format(round="v5.1", commit="029742c79b1ec561e2f5a25d7daa585d2beebde1",
                           file="summary_results.json"),
    "v6.0": _PINNED.format(round="v6.0", commit="ab33b2144a9f822f69d24f78569f993d195ee7e5",
                           file="summary_results.json"),
    "v6.1": "https://raw.githubusercontent.com/mlcommons/inference_results_v6.1/main/summary.csv",
}


class MlperfConfig(SourceConfig):
    """MLPerf Inference summaries, one URL per round."""

    rounds: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_ROUNDS))


def load(ctx: LoadContext) -> None:
    """Each configured round on its own: fetch, parse (format recognised from the content),
    check, and replace that round's rows. A round that fails (unreachable, unparseable, empty,
    shrunk) keeps its last good rows and is named stale; the other rounds still land."""
    cfg = ctx.config
    assert isinstance(cfg, MlperfConfig)
    written = 0
    for round_name, url in cfg.rounds.items():
        detail: dict = {"url": redact(ctx.resolve(url))}
        ctx.outcome.details[round_name] = detail
        try:
            written += _load_round(ctx, round_name, ctx.resolve(url), detail)
        except PerfledgerError as e:
            detail.update(status="failed", message=str(e))
            if isinstance(e, SourceError) and e.excerpt:
                ctx.outcome.excerpts[round_name] = e.excerpt
            # named once: "v5.1: <why>", not "mlperf: …" or "mlperf v5.1: …" again
            why = re.sub(rf"^{SOURCE}(?: {re.escape(round_name)})?:\s*", "", str(e))
            ctx.outcome.stale[round_name] = why
    if ctx.outcome.stale and len(ctx.outcome.stale) == len(cfg.rounds):
        raise SourceError("; ".join(f"{r}: {why}" for r, why in ctx.outcome.stale.items()),
                          source=SOURCE)
    ctx.outcome.finish(written)


def _load_round(ctx: LoadContext, round_name: str, url: str, detail: dict) -> int:
    """One round; returns the rows written (0 when its file has not changed)."""
    prev = ctx.previous(SOURCE, round_name)
    started = time.perf_counter()
    raw = ctx.fetch(url, SOURCE, prev)
    detail["fetch_seconds"] = round(time.perf_counter() - started, 3)
    reparse = prev is not None and prev["parser_version"] != PARSER_VERSION
    if not reparse and (raw.not_modified or (prev and prev["sha256"] == raw.sha256)):
        detail["status"] = "unchanged (304)" if raw.not_modified else "unchanged (same sha256)"
        return 0
    if raw.not_modified:  # a newer parser must read the bytes it already has
        assert prev is not None
        raw = Raw(source=SOURCE, url=prev["url"], body=ctx.layout.raw_path(prev["sha256"])
                  .read_bytes(), fetched_at=prev["fetched_at"], etag=prev["etag"],
                  last_modified=prev["last_modified"])
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
    before = set(ctx.reader.execute(
        "SELECT DISTINCT model_id, scenario FROM mlperf_result WHERE list_contains(?, round)",
        [rounds]).fetchall())
    ctx.check_entities(f"{SOURCE} {round_name}: models and scenarios", before,
                       {(r["model_id"], r["scenario"]) for r in rows})
    ctx.record(raw, kind="mlperf_summary", label=round_name, parser_version=PARSER_VERSION)
    ctx.con.execute("DELETE FROM mlperf_result WHERE list_contains(?, round)", [rounds])
    insert_rows(ctx.con, "mlperf_result", rows)
    detail.update(status="updated", rows=len(rows), sha256=raw.sha256,
                  format=rows[0]["source_format"])
    return len(rows)
