"""How well MLPerf's accelerator names map to catalogued ids, per round: what the refresh report,
/healthz and /v1/accelerators show. Light on purpose (no schema or API models): the refresh
computes it at every publish."""

from __future__ import annotations

import duckdb

from warehouse.figures.derived import round_order


def coverage(con: duckdb.DuckDBPyConnection) -> dict:
    """Accelerator-name coverage, over all rounds and per round: rows with a single accelerator
    name, mapped (by alias, by identity), the unmapped names and the ambiguous ones (with their
    candidate ids) with their row counts, rows of heterogeneous systems."""
    per_round: dict[str, dict] = {}
    for rnd, rows, alias, ident, mixed in con.execute(f"""
            WITH per AS (
                SELECT round, count(*) FILTER (WHERE accelerator_mix = 'single') AS single,
                       count(*) FILTER (WHERE accelerator_match = 'alias') AS alias,
                       count(*) FILTER (WHERE accelerator_match = 'identity') AS ident,
                       count(*) FILTER (WHERE accelerator_mix = 'mixed') AS mixed
                FROM mlperf_result GROUP BY round)
            SELECT * FROM per ORDER BY {round_order('per.round')}""").fetchall():  # noqa: S608
        per_round[rnd] = {"rows_with_accelerator": rows, "rows_mapped": alias + ident,
                          "mapped_by_alias": alias, "mapped_by_identity": ident,
                          "mapped_share": round((alias + ident) / rows, 4) if rows else None,
                          "rows_unmapped": 0, "rows_ambiguous": 0, "rows_mixed": mixed,
                          "unmapped": {}, "ambiguous": {}}
    for rnd, name, how, candidates, rows in con.execute("""
            SELECT round, accelerator_model_name, accelerator_match,
                   any_value(accelerator_candidates), count(*)
            FROM mlperf_result WHERE accelerator_match IN ('unmapped', 'ambiguous')
            GROUP BY ALL ORDER BY round, count(*) DESC, accelerator_model_name""").fetchall():
        entry = per_round[rnd]
        entry[f"rows_{how}"] += rows
        if how == "unmapped":
            entry["unmapped"][name] = rows
        else:
            entry["ambiguous"][name] = {"rows": rows, "candidates": candidates.split(", ")}
    by_identity = dict(con.execute("""
        SELECT accelerator_model_name, any_value(accelerator_id) FROM mlperf_result
        WHERE accelerator_match = 'identity' GROUP BY 1 ORDER BY 1""").fetchall())
    return {"rows_with_accelerator": sum(r["rows_with_accelerator"] for r in per_round.values()),
            "rows_mapped": sum(r["rows_mapped"] for r in per_round.values()),
            "mapped_by_identity": by_identity,
            "unmapped_names": sorted({n for r in per_round.values() for n in r["unmapped"]}),
            "ambiguous_names": dict(sorted({n: a["candidates"] for r in per_round.values()
                                            for n, a in r["ambiguous"].items()}.items())),
            "accelerators_by_round": per_round}
