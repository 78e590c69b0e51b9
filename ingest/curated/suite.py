"""Claims, specs, model shapes: dated, sourced over https, positive."""

from __future__ import annotations

from warehouse.quality.suites import TODAY, Rule, rows


def rules() -> list[Rule]:
    """The rules of this source's tables."""
    out: list[Rule] = []
    for table in ("claim", "hardware_spec", "model_shape"):
        out.append(rows(f"{table}: source URL is https (assumptions may cite a project document)",
                        table, "SELECT id, source_url FROM {batch} WHERE source_url NOT LIKE "
                        "'https://%' AND NOT (evidence = 'assumption' AND source_url LIKE "
                        "'document:%')"))
    out += [
        rows("claim: claimed_on <= checked_on <= today", "claim",
             "SELECT id, claimed_on, checked_on FROM {batch} WHERE claimed_on > checked_on "
             f"OR checked_on > {TODAY}"),
        rows("claim: value is positive", "claim", "SELECT id, value FROM {batch} WHERE NOT value > 0"),
        rows("hardware_spec: value is positive", "hardware_spec",
             "SELECT id, value FROM {batch} WHERE NOT value > 0"),
        rows("hardware_spec: a figure is a number with its unit or words, never neither",
             "hardware_spec", "SELECT id, value, value_text FROM {batch} WHERE "
             "(value IS NULL) = (value_text IS NULL) OR (value IS NOT NULL AND unit IS NULL)"),
        rows("hardware_spec: checked_on is not in the future", "hardware_spec",
             f"SELECT id, checked_on FROM {{batch}} WHERE checked_on > {TODAY}"),
    ]
    return out
