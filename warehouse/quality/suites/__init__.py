"""Validation rules as data, and the core suites every snapshot must pass.

A rule is data (no great-expectations import here, so the API never pays for it);
``warehouse.quality.validation`` turns each rule into a great-expectations expectation and runs it on
the staged snapshot. Rule names say what must hold, so a failure reads as the broken rule.
The core suites here (provenance, derived) check what holds across sources; each source's own
rules live in its folder (``ingest/<source>/suite.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ERROR = "error"      # blocks publishing
WARNING = "warning"  # published and reported

# "Today" for rules that refuse dates in the future: the clock's date, or the date of the
# newest run the snapshot records when the clock is behind it, so that a clock set back never
# turns data an earlier refresh validated into a failure (time from the data, not the clock).
TODAY = ("greatest(current_date, coalesce((SELECT max(finished_at) FROM refresh_run)::DATE, "
         "current_date))")


@dataclass(frozen=True)
class Rule:
    """One expectation: ``kind`` is rows (a SQL query returning offending rows), in_set,
    not_null or unique; ``sql`` uses ``{batch}`` for the table under test."""

    name: str
    table: str
    kind: str
    severity: str = ERROR
    column: str | None = None
    values: tuple = ()
    sql: str | None = None
    columns: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Rule:
        """A rule from ``dataclasses.asdict`` after a JSON round trip (lists back to tuples)."""
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                                  for k, v in data.items()}
        return cls(**fields)


def rows(name: str, table: str, sql: str, severity: str = ERROR) -> Rule:
    """A rule that holds when ``sql`` (``SELECT … FROM {batch} WHERE <violation>``) is empty."""
    return Rule(name=name, table=table, kind="rows", sql=sql, severity=severity)


def in_set(name: str, table: str, column: str, values, severity: str = ERROR) -> Rule:
    """Every value of ``column`` is in ``values``."""
    return Rule(name=name, table=table, kind="in_set", column=column, values=tuple(values),
                severity=severity)


def not_null(name: str, table: str, column: str, severity: str = ERROR) -> Rule:
    """``column`` is never NULL."""
    return Rule(name=name, table=table, kind="not_null", column=column, severity=severity)


def unique(name: str, table: str, columns: tuple[str, ...], severity: str = ERROR) -> Rule:
    """The combination of ``columns`` is unique."""
    return Rule(name=name, table=table, kind="unique", columns=columns, severity=severity)


def core_rules() -> list[Rule]:
    """The rules of the core suites: provenance and tagging, then derived figures."""
    from warehouse.quality.suites import derived, provenance

    return [*provenance.rules(), *derived.rules()]
