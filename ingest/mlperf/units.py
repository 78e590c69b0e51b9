"""Units a summary file misstates, corrected where the publisher's own checker says otherwise.

MLCommons' submission checker decides the unit of every result: ``SPECIAL_UNIT_DICT`` per
benchmark and scenario, else ``UNIT_DICT`` per scenario (Interactive: ``Queries/s``). Until
mlcommons/inference PR #2564 its table had no Interactive entry for llama3.1-8b, so the v5.1
summary labels those eight results ``Queries/s`` although they count tokens (Dell PowerEdge
XE9680L: 102,907 Interactive beside 143,309 Tokens/s Offline); v6.0 and v6.1, checked after the
fix, say ``Tokens/s``. Each correction is declared here, once, with the checker line that
grounds it; a corrected row keeps the published spelling in ``extras`` (``units_as_published``,
with ``units_corrected_by``, the source URL), and the suite warns on every corrected row.
"""

from __future__ import annotations

from dataclasses import dataclass

from warehouse.model.vocabulary import QUERIES_PER_S, TOKENS_PER_S, Scenario, normalise_model


@dataclass(frozen=True)
class UnitCorrection:
    """Results of ``benchmark`` (the official model, as the checker keys it) in ``scenario``
    published as ``published`` are in ``unit``, per ``source`` (which says ``quote``)."""

    benchmark: str
    scenario: str
    published: str
    unit: str
    source: str
    quote: str


UNIT_CORRECTIONS: tuple[UnitCorrection, ...] = (
    UnitCorrection(
        benchmark="llama3.1-8b", scenario=Scenario.Interactive.value, published=QUERIES_PER_S,
        unit=TOKENS_PER_S,
        source="https://github.com/mlcommons/inference/blob/"
               "6d0cf9dcb1b470e1fed4c7cd913e6a345b1b658a/tools/submission/submission_checker/"
               "constants.py#L1534-L1539",
        quote='SPECIAL_UNIT_DICT = { "llama3.1-8b": { "Offline": "Tokens/s", "Server": '
              '"Tokens/s", "Interactive": "Tokens/s", }, (line 1538 added by '
              'https://github.com/mlcommons/inference/pull/2564 "Update Llama3.1b interactive '
              'unit", commit 6d0cf9dcb1b470e1fed4c7cd913e6a345b1b658a, 2026-03-17)'),
)


def correction_for(row: dict, scenario: str) -> UnitCorrection | None:
    """The declared correction that applies to ``row`` (published columns, ``scenario``
    normalised), or None. The benchmark is the official model where the file names it."""
    benchmark = normalise_model(str(row.get("mlperf_model") or row["model"]))
    return next((c for c in UNIT_CORRECTIONS if (c.benchmark, c.scenario, c.published)
                 == (benchmark, scenario, row["units"])), None)


def correct_units(row: dict, scenario: str, extras: dict | None) -> dict | None:
    """Set ``row["units"]`` to the checker's unit where a declared correction applies; the
    extras returned keep the published spelling and the rule's source."""
    correction = correction_for(row, scenario)
    if correction is None:
        return extras
    row["units"] = correction.unit
    return {**(extras or {}), "units_as_published": correction.published,
            "units_corrected_by": correction.source}
