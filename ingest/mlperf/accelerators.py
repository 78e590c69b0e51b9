"""Map each result's published accelerator name to one accelerator id.

First the curated aliases (``data/accelerators.yaml``): an exact spelling. Then, for a name no
alias spells, a rule: its vendor and family words and its memory must equal those of exactly
one known id (read from the id itself or from one of its curated spellings) — so
``NVIDIA H100-SXM-80GB`` is ``nvidia-h100-sxm`` and ``Virtualized NVIDIA H200-SXM-141GB`` is
``nvidia-h200``, while ``NVIDIA H100-PCIe-80GB`` (no such id) or a name that fits two ids stays
unmapped. Unmapped names are listed in the run report and a validation warning; nothing is
guessed.
"""

from __future__ import annotations

import re

import duckdb

# Words that say nothing about which accelerator it is.
_NOISE = {"virtualized", "instinct", "gpu", "hbm", "hbm2", "hbm2e", "hbm3", "hbm3e", "r", "tm",
          "the", "with"}
_MEMORY = re.compile(r"^(\d+)g(?:b)?$")


def signature(name: str) -> tuple[frozenset[str], int | None]:
    """(vendor and family words, memory in GB) of an accelerator spelling or id."""
    words = [w for w in re.split(r"[\s\-_/,()\[\]]+", name.lower()) if w]
    memory = None
    family = set()
    for w in words:
        m = _MEMORY.match(w)
        if m:
            memory = int(m.group(1))
        elif w not in _NOISE:
            family.add(w)
    return frozenset(family), memory


def rule_match(name: str, known: dict[str, list[str]]) -> tuple[str | None, list[str]]:
    """The one id whose signature (from the id or a curated spelling) equals the name's, and
    every candidate: (id, [id]) when unambiguous, (None, candidates) otherwise."""
    family, memory = signature(name)
    candidates = []
    for acc_id, spellings in known.items():
        for ref in (acc_id, *spellings):
            ref_family, ref_memory = signature(ref)
            if ref_family == family and (memory is None or ref_memory is None
                                         or memory == ref_memory):
                candidates.append(acc_id)
                break
    return (candidates[0] if len(candidates) == 1 else None), sorted(candidates)


def apply_aliases(con: duckdb.DuckDBPyConnection) -> dict:
    """Set ``accelerator_id`` (and ``accelerator_match``) on every result; returns coverage:
    rows with a single accelerator, rows mapped, names mapped by rule, names left unmapped
    (with the ids they could be, when several)."""
    con.execute("""
        UPDATE mlperf_result AS r
        SET accelerator_id = a.accelerator_id, accelerator_match = 'alias',
            accelerator_vendor = coalesce(a.vendor, r.accelerator_vendor),
            accelerator_mix = a.mix
        FROM accelerator_alias AS a
        WHERE a.kind = 'mlperf_name' AND a.alias = r.accelerator_model_name
    """)
    known: dict[str, list[str]] = {}
    for acc_id, alias in con.execute(
            "SELECT accelerator_id, alias FROM accelerator_alias WHERE kind = 'mlperf_name' "
            "AND accelerator_id IS NOT NULL").fetchall():
        known.setdefault(acc_id, []).append(alias)
    for (acc_id,) in con.execute("SELECT DISTINCT accelerator_id FROM accelerator_alias "
                                 "WHERE accelerator_id IS NOT NULL").fetchall():
        known.setdefault(acc_id, [])  # every curated id (kind 'id' rows), spelled or not
    names = [r[0] for r in con.execute("""
        SELECT DISTINCT accelerator_model_name FROM mlperf_result
        WHERE accelerator_mix = 'single' AND accelerator_id IS NULL ORDER BY 1""").fetchall()]
    by_rule: dict[str, str] = {}
    ambiguous: dict[str, list[str]] = {}
    for name in names:
        found, candidates = rule_match(name, known)
        if found:
            by_rule[name] = found
        elif candidates:
            ambiguous[name] = candidates
    if by_rule:
        con.execute("""
            UPDATE mlperf_result AS r SET accelerator_id = m.id, accelerator_match = 'rule'
            FROM (SELECT unnest(?::VARCHAR[]) AS name, unnest(?::VARCHAR[]) AS id) AS m
            WHERE r.accelerator_model_name = m.name AND r.accelerator_id IS NULL
        """, [list(by_rule), list(by_rule.values())])
    unmapped = [n for n in names if n not in by_rule]
    total, mapped = con.execute("""
        SELECT count(*) FILTER (WHERE accelerator_mix = 'single'),
               count(*) FILTER (WHERE accelerator_mix = 'single' AND accelerator_id IS NOT NULL)
        FROM mlperf_result""").fetchone() or (0, 0)
    return {"rows_with_accelerator": total, "rows_mapped": mapped, "mapped_by_rule": by_rule,
            "unmapped_names": unmapped, "ambiguous_names": ambiguous}
