"""The accelerator catalogue as the API serves it: every curated id with its spellings seen per
round, its datasheet figures and their sources, the gaps, the Azure VM sizes that rent it; and
how well MLPerf's accelerator names map, per round (mapped, unmapped, ambiguous)."""

from __future__ import annotations

from collections import defaultdict

import duckdb

from warehouse.figures.coverage import coverage
from warehouse.figures.derived import round_order
from warehouse.model.vocabulary import ACCELERATOR_FIGURES
from warehouse.storage.db import fetch_dicts

__all__ = ["accelerator_detail", "accelerators", "coverage"]


def _figures(con: duckdb.DuckDBPyConnection, ids: list[str] | None = None) -> dict[str, list]:
    """Each accelerator's hardware_spec rows, with the value in the unit people read."""
    rows = fetch_dicts(con, """
        SELECT hardware_id, metric, value, value_text, unit, evidence, checked_on, source_title,
               source_url, cited_via, vendor_url, quote, note
        FROM hardware_spec s JOIN hardware h ON h.id = s.hardware_id
        WHERE h.kind = 'accelerator' AND (? IS NULL OR list_contains(?, hardware_id))
        ORDER BY hardware_id, metric""", [ids, ids])
    out: dict[str, list] = defaultdict(list)
    for r in rows:
        shown = ACCELERATOR_FIGURES.get(r["metric"])
        if shown and shown[1] and r["value"] is not None:
            r["display_value"], r["display_unit"] = r["value"] / shown[2], shown[1]
        else:
            r["display_value"], r["display_unit"] = None, None
        out[r.pop("hardware_id")].append(r)
    return out


def _gaps(figures: list[dict]) -> list[str]:
    have = {f["metric"] for f in figures}
    return [m for m in ACCELERATOR_FIGURES if m not in have]


def _spellings(con: duckdb.DuckDBPyConnection, acc_id: str | None = None) -> dict[str, list]:
    """Per accelerator id: each spelling seen in MLPerf with its round, rows, how it mapped and
    its decorations (newest round first)."""
    rows = fetch_dicts(con, f"""
        WITH seen AS (
            SELECT accelerator_id, round, accelerator_model_name AS name,
                   accelerator_match AS match, any_value(accelerator_identity) AS identity,
                   any_value(accelerator_decorations) AS decorations, count(*) AS rows
            FROM mlperf_result WHERE accelerator_id IS NOT NULL
              AND (? IS NULL OR accelerator_id = ?)
            GROUP BY ALL)
        SELECT * FROM seen
        ORDER BY accelerator_id, {round_order('seen.round')} DESC, rows DESC, name""",
                       [acc_id, acc_id])
    out: dict[str, list] = defaultdict(list)
    for r in rows:
        out[r.pop("accelerator_id")].append(r)
    return out


def accelerators(con: duckdb.DuckDBPyConnection) -> dict:
    """The catalogue: per id its curated spellings, the spellings seen per round, result count,
    Azure VM sizes, how many datasheet figures it has and which are missing; then the coverage
    per round, every unmapped and ambiguous name, and the gaps per id."""
    rows = fetch_dicts(con, """
        SELECT accelerator_id AS id, any_value(vendor) AS vendor,
               any_value(name) FILTER (WHERE kind = 'id') AS name,
               any_value(note) FILTER (WHERE kind = 'id') AS note,
               coalesce(list(alias ORDER BY alias) FILTER (WHERE kind = 'mlperf_name'), [])
                   AS mlperf_names,
               list({'sku': alias, 'accelerators': count} ORDER BY alias)
                   FILTER (WHERE kind = 'azure_sku') AS azure_skus,
               (SELECT count(*) FROM mlperf_result r WHERE r.accelerator_id = a.accelerator_id)
                   AS mlperf_results
        FROM accelerator_alias a WHERE accelerator_id IS NOT NULL
        GROUP BY accelerator_id ORDER BY accelerator_id""")
    figures = _figures(con)
    seen = _spellings(con)
    for r in rows:
        r["spellings"] = seen.get(r["id"], [])
        r["figures"] = len(figures.get(r["id"], []))
        r["gaps"] = _gaps(figures.get(r["id"], []))
    cov = coverage(con)
    per_round = cov["accelerators_by_round"]
    return {
        "total": len(rows), "rows": rows,
        "coverage": {rnd: {k: v for k, v in c.items() if k not in ("unmapped", "ambiguous")}
                     for rnd, c in per_round.items()},
        "unmapped": [{"round": rnd, "name": n, "rows": k}
                     for rnd, c in per_round.items() for n, k in c["unmapped"].items()],
        "ambiguous": [{"round": rnd, "name": n, "rows": a["rows"], "candidates": a["candidates"]}
                      for rnd, c in per_round.items() for n, a in c["ambiguous"].items()],
        "gaps": {r["id"]: r["gaps"] for r in rows if r["gaps"]},
    }


def accelerator_detail(con: duckdb.DuckDBPyConnection, acc_id: str) -> dict | None:
    """One catalogued accelerator: identity, figures with their sources and the gaps, spellings
    per round, the MLPerf rounds and result counts it appears in, the Azure VM sizes that rent
    it; None when the id is not catalogued."""
    base = fetch_dicts(con, """
        SELECT accelerator_id AS id, any_value(vendor) AS vendor,
               any_value(name) FILTER (WHERE kind = 'id') AS name,
               any_value(note) FILTER (WHERE kind = 'id') AS note,
               coalesce(list(alias ORDER BY alias) FILTER (WHERE kind = 'mlperf_name'), [])
                   AS mlperf_names
        FROM accelerator_alias WHERE accelerator_id = ? GROUP BY accelerator_id""", [acc_id])
    if not base:
        return None
    out = base[0]
    spellings = _spellings(con, acc_id).get(acc_id, [])
    out["identity"] = sorted({s["identity"] for s in spellings if s["identity"]})
    figures = _figures(con, [acc_id]).get(acc_id, [])
    out["figures"] = figures
    out["gaps"] = _gaps(figures)
    out["spellings"] = spellings
    out["rounds"] = fetch_dicts(con, f"""
        WITH per AS (
            SELECT round, count(*) FILTER (WHERE NOT is_power) AS results,
                   count(*) FILTER (WHERE is_power) AS power_results,
                   count(DISTINCT organization) AS organizations,
                   list(DISTINCT division ORDER BY division) AS divisions,
                   count(DISTINCT accelerator_model_name) AS spellings
            FROM mlperf_result WHERE accelerator_id = ? GROUP BY round)
        SELECT * FROM per ORDER BY {round_order('per.round')}""", [acc_id])
    out["azure_skus"] = fetch_dicts(con, """
        SELECT alias AS sku, count AS accelerators FROM accelerator_alias
        WHERE kind = 'azure_sku' AND accelerator_id = ? ORDER BY alias""", [acc_id])
    return out
