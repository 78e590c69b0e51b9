"""Load MLPerf rounds into ``mlperf_result``, and map accelerator spellings to ids."""

from __future__ import annotations

import time

import duckdb
from pydantic import Field

from ingest.context import LoadContext, SourceConfig
from ingest.http import redact
from ingest.mlperf.parse import PARSER_VERSION, SOURCE, ParseReport, parse
from warehouse.db import insert_rows, scalar

DEFAULT_ROUNDS = {
    "v6.1": "https://raw.githubusercontent.com/mlcommons/inference_results_v6.1/main/summary.csv",
}


class MlperfConfig(SourceConfig):
    """MLPerf Inference summaries, one URL per round."""

    rounds: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_ROUNDS))


def load(ctx: LoadContext) -> None:
    """Each configured round: fetch the summary CSV, and replace that round's rows if it changed."""
    cfg = ctx.config
    assert isinstance(cfg, MlperfConfig)
    updated = 0
    for round_name, url in cfg.rounds.items():
        url = ctx.resolve(url)
        prev = ctx.previous(SOURCE, round_name)
        started = time.perf_counter()
        raw = ctx.fetch(url, SOURCE, prev)
        detail: dict = {"url": redact(url), "fetch_seconds": round(time.perf_counter() - started, 3)}
        ctx.outcome.details[round_name] = detail
        if raw.not_modified or (prev and prev["sha256"] == raw.sha256):
            detail["status"] = "unchanged (304)" if raw.not_modified else "unchanged (same sha256)"
            continue
        snapshot_id = ctx.record(raw, kind="mlperf_summary", label=round_name,
                                 parser_version=PARSER_VERSION)
        report = ParseReport()
        started = time.perf_counter()
        rows = list(parse(raw, snapshot_id=snapshot_id, report=report))
        detail["parse_seconds"] = round(time.perf_counter() - started, 3)
        ctx.outcome.warnings.extend(report.warnings)
        wrong_round = {r["round"] for r in rows} - {round_name}
        if wrong_round:
            ctx.outcome.warnings.append(
                f"mlperf: {round_name} file has rows for round(s) {sorted(wrong_round)}; "
                "kept under their published version")
        rounds = sorted({r["round"] for r in rows} | {round_name})
        marks = ",".join("?" * len(rounds))
        old = scalar(ctx.con, f"SELECT count(*) FROM mlperf_result WHERE round IN ({marks})",  # noqa: S608
                     rounds)
        ctx.check_shrink(f"mlperf {round_name}", old, len(rows))
        ctx.con.execute(f"DELETE FROM mlperf_result WHERE round IN ({marks})", rounds)  # noqa: S608
        insert_rows(ctx.con, "mlperf_result", rows)
        detail.update(status="updated", rows=len(rows), sha256=raw.sha256)
        updated += len(rows)
    ctx.outcome.rows = updated
    ctx.outcome.status = "updated" if updated else "unchanged"


def apply_aliases(con: duckdb.DuckDBPyConnection) -> dict:
    """Map each result's published accelerator name to an accelerator id via the curated aliases.

    Returns the mapping coverage: rows with an accelerator, rows mapped, names not mapped.
    """
    con.execute("""
        UPDATE mlperf_result AS r
        SET accelerator_id = a.accelerator_id,
            accelerator_vendor = coalesce(a.vendor, r.accelerator_vendor),
            accelerator_mix = a.mix
        FROM accelerator_alias AS a
        WHERE a.kind = 'mlperf_name' AND a.alias = r.accelerator_model_name
    """)
    unmapped = [r[0] for r in con.execute("""
        SELECT DISTINCT accelerator_model_name FROM mlperf_result
        WHERE accelerator_mix = 'single' AND accelerator_id IS NULL ORDER BY 1""").fetchall()]
    total, mapped = con.execute("""
        SELECT count(*) FILTER (WHERE accelerator_mix = 'single'),
               count(*) FILTER (WHERE accelerator_mix = 'single' AND accelerator_id IS NOT NULL)
        FROM mlperf_result""").fetchone() or (0, 0)
    return {"rows_with_accelerator": total, "rows_mapped": mapped, "unmapped_names": unmapped}
