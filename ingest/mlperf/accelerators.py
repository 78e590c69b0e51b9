"""Map each result's published accelerator name to one accelerator id, at every refresh.

Each distinct name is read by ``identity.parse`` into the chip it names and its decorations
(power cap, partition mode, cooling variant, virtualisation, instance marker, ...); every
decoration goes to its own column of ``mlperf_result``, so nothing in the name is lost. Then:

1. ``alias``: the name is a curated spelling (``data/accelerators.yaml``), exactly;
2. ``identity``: the name's identity is exactly that of one id's spellings, or else is
   compatible (agrees wherever both say) with the spellings of exactly one id;
3. ``ambiguous``: it fits several ids — the candidates are kept and reported, never guessed;
4. ``unmapped``: it fits none.

The mapping is redone over every loaded row whenever a refresh publishes (the curated file is
read first), so adding an alias re-maps rows already loaded without fetching MLPerf again.
Coverage per round (rows with a name, mapped, unmapped names and counts, ambiguous names) goes
to the run report; unmapped and ambiguous rows also raise a validation warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import duckdb

from ingest.mlperf.identity import Identity, compatible, parse
from warehouse.figures.coverage import coverage


@dataclass(frozen=True)
class Mapping:
    """How one name maps: the id (None unless mapped), how, and the candidate ids."""

    accelerator_id: str | None
    match: str
    candidates: tuple[str, ...] = ()


def match(name: str, spellings: dict[str, list[str]]) -> Mapping:
    """Map ``name`` against the curated ``spellings`` (id → its MLPerf spellings)."""
    for acc_id, names in spellings.items():
        if name in names:
            return Mapping(acc_id, "alias", (acc_id,))
    ident = identity_of(name)
    refs: list[tuple[str, Identity]] = [(acc_id, identity_of(n)) for acc_id, names in
                                        spellings.items() for n in names]
    exact = sorted({i for i, ref in refs if ref.exact() == ident.exact()})
    if len(exact) == 1:
        return Mapping(exact[0], "identity", tuple(exact))
    fits = exact or sorted({i for i, ref in refs if compatible(ident, ref)})
    if len(fits) == 1:
        return Mapping(fits[0], "identity", tuple(fits))
    if fits:
        return Mapping(None, "ambiguous", tuple(fits))
    return Mapping(None, "unmapped")


@lru_cache(maxsize=4096)
def identity_of(name: str) -> Identity:
    """The identity of a spelling (cached: every refresh reads the same few hundred)."""
    return parse(name)[0]


def curated_spellings(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every curated accelerator id and its MLPerf spellings (an id may have none)."""
    out: dict[str, list[str]] = {}
    for acc_id, alias, kind in con.execute(
            "SELECT accelerator_id, alias, kind FROM accelerator_alias "
            "WHERE accelerator_id IS NOT NULL AND kind IN ('id', 'mlperf_name') "
            "ORDER BY accelerator_id, alias").fetchall():
        names = out.setdefault(acc_id, [])
        if kind == "mlperf_name":
            names.append(alias)
    return out


_COLUMNS = ("accelerator_id", "accelerator_match", "accelerator_identity",
            "accelerator_candidates", "accelerator_power_cap_w", "accelerator_power_w",
            "accelerator_partition_mode", "accelerator_cooling", "accelerator_virtualized",
            "accelerator_instances", "accelerator_decorations")
_TYPES = ("VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "INTEGER", "VARCHAR", "VARCHAR",
          "BOOLEAN", "VARCHAR", "VARCHAR")


def apply_aliases(con: duckdb.DuckDBPyConnection) -> dict:
    """Set ``accelerator_id``, ``accelerator_match`` and the decoration columns on every
    result; returns the coverage for the run report."""
    # Special names (N/A, heterogeneous systems) say their mix; everything else keeps the
    # mix its parser read.
    con.execute("""
        UPDATE mlperf_result AS r SET accelerator_mix = a.mix
        FROM accelerator_alias AS a
        WHERE a.kind = 'mlperf_name' AND a.accelerator_id IS NULL
          AND a.alias = r.accelerator_model_name""")
    con.execute("UPDATE mlperf_result SET "  # noqa: S608 - fixed column names
                + ", ".join(f"{c} = NULL" for c in _COLUMNS))
    spellings = curated_spellings(con)
    vendors = dict(con.execute("SELECT accelerator_id, any_value(vendor) FROM accelerator_alias "
                               "WHERE kind = 'id' GROUP BY 1").fetchall())
    names = [r[0] for r in con.execute("""
        SELECT DISTINCT accelerator_model_name FROM mlperf_result
        WHERE accelerator_mix = 'single' AND accelerator_model_name IS NOT NULL
        ORDER BY 1""").fetchall()]
    values: list[list] = [[] for _ in _COLUMNS]
    for name in names:
        m = match(name, spellings)
        ident, deco = parse(name)
        row = (m.accelerator_id, m.match, ident.key(),
               ", ".join(m.candidates) if m.match == "ambiguous" else None,
               deco.power_cap_w, deco.power_w, deco.partition_mode, deco.cooling,
               deco.virtualized, deco.instances, deco.text())
        for column, value in zip(values, row, strict=True):
            column.append(value)
    if names:
        unnest = ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in zip(_COLUMNS, _TYPES,
                                                                         strict=True))
        sets = ", ".join(f"{c} = m.{c}" for c in _COLUMNS)
        con.execute(  # fixed column names; every value is a bound parameter
            f"UPDATE mlperf_result AS r SET {sets}"  # noqa: S608
            ", accelerator_vendor = coalesce(v.vendor, r.accelerator_vendor) "
            f"FROM (SELECT unnest(?::VARCHAR[]) AS name, {unnest}) AS m "
            "LEFT JOIN (SELECT unnest(?::VARCHAR[]) AS id, unnest(?::VARCHAR[]) AS vendor) AS v "
            "ON v.id = m.accelerator_id "
            "WHERE r.accelerator_model_name = m.name AND r.accelerator_mix = 'single'",
            [names, *values, list(vendors), list(vendors.values())])
    return coverage(con)
