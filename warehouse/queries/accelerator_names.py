"""What people type for an accelerator, resolved to the snapshot's accelerator ids."""

from __future__ import annotations

import re

import duckdb

from warehouse.exceptions import QueryError


def _tokens(text: str) -> frozenset[str]:
    return frozenset(t for t in re.split(r"[-_\s/()]+", text.lower()) if t)


def accelerator_aliases(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(accelerator id, lower-cased alias) of every alias this snapshot knows an id for."""
    return con.execute("SELECT DISTINCT accelerator_id, lower(alias) FROM accelerator_alias "
                       "WHERE accelerator_id IS NOT NULL").fetchall()


def resolve_accelerators(con: duckdb.DuckDBPyConnection, values: tuple[str, ...],
                         aliases: list[tuple[str, str]] | None = None) -> list[str]:
    """Accelerator ids for what people type, case-insensitively: an id (``nvidia-h200``), a
    spelling as published (``NVIDIA H200-SXM-141GB``, ``Standard_ND96isr_H200_v5``) or a short
    name whose words are all words of one id (``H200``, ``MI355X``, ``B200``). A short name
    that several ids contain is ambiguous (a QueryError listing them) unless exactly one id is
    that name and its vendor alone (``H200`` is ``nvidia-h200``, not ``nvidia-h200-nvl``). A
    value matching nothing is kept as given: the query then answers no rows, with a hint.
    ``aliases``: this snapshot's ``accelerator_aliases``, when already read."""
    rows = accelerator_aliases(con) if aliases is None else aliases
    ids = {i for i, _ in rows}
    by_alias: dict[str, set[str]] = {}
    for i, alias in rows:
        by_alias.setdefault(alias, set()).add(i)
    out: list[str] = []
    for value in values:
        key = value.strip().lower()
        if key in ids:
            out.append(key)
            continue
        if key in by_alias:
            out.extend(sorted(by_alias[key]))
            continue
        words = _tokens(key)
        candidates = sorted(i for i in ids if words and words <= _tokens(i))
        exact = [i for i in candidates if _tokens(i) - words <= {i.split("-")[0]}]
        if len(candidates) > 1 and len(exact) != 1:
            raise QueryError(f"accelerator {value!r} is ambiguous: it may be "
                             f"{', '.join(candidates)}; name one", param="accelerator")
        out.append(exact[0] if exact else candidates[0] if candidates else key)
    return out
