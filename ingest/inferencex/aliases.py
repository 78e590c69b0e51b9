"""InferenceX keys → perfledger ids (``data/inferencex.yaml``), and the identity report.

Hardware keys map to accelerator ids, raw model keys to the warehouse model id (the MLPerf
model family, so MLPerf results overlay the same model) and to the display name the benchmarks
endpoint takes. The observations themselves are never rewritten: the ``observation`` view joins
these aliases, so a corrected alias re-labels history at once. A key seen in observations and
absent from the file is reported by every refresh (``identity``), as MLPerf spellings are.
"""

from __future__ import annotations

import duckdb
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ingest.http import Raw
from warehouse.exceptions import ParseError

SOURCE = "inferencex"


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    key: str = Field(min_length=1)
    id: str | None = None
    note: str | None = None


class ModelEntry(_Entry):
    display: str | None = None


class AliasFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hardware: list[_Entry] = Field(default_factory=list)
    models: list[ModelEntry] = Field(default_factory=list)


def parse_aliases(raw: Raw, *, snapshot_id: str, file: str) -> list[dict]:
    """The alias file as ``inferencex_alias`` rows; a malformed file fails the source."""
    try:
        parsed = AliasFile.model_validate(yaml.safe_load(raw.body.decode("utf-8")) or {})
    except (yaml.YAMLError, UnicodeDecodeError, ValidationError) as e:
        raise ParseError(f"{SOURCE}: {file} is not a valid alias file: {e}", source=SOURCE,
                         url=raw.url) from e
    rows: dict[str, dict] = {}
    for kind, entries in (("hardware", parsed.hardware), ("model", parsed.models)):
        for entry in entries:
            key = entry.key.lower() if kind == "hardware" else entry.key
            row_id = f"{kind}:{key}"
            if row_id in rows:
                raise ParseError(f"{SOURCE}: {file} lists {kind} key {key!r} twice",
                                 source=SOURCE, url=raw.url)
            rows[row_id] = {"id": row_id, "kind": kind, "key": key, "target_id": entry.id,
                            "display": getattr(entry, "display", None), "note": entry.note,
                            "file": file, "source_snapshot_id": snapshot_id}
    return list(rows.values())


def identity(con: duckdb.DuckDBPyConnection) -> dict:
    """Coverage of the mapping over the observations: keys mapped, keys the file lists with no
    counterpart (``id: null``), and keys it does not list at all (unmapped: add them)."""
    out: dict = {}
    for kind, column in (("hardware", "hardware_base"), ("model", "model")):
        rows = con.execute(f"""
            SELECT o.{column} AS key, count(*) AS n, any_value(a.id) IS NOT NULL AS listed,
                   any_value(a.target_id) AS target
            FROM inferencex_observation o
            LEFT JOIN inferencex_alias a ON a.kind = ? AND a.key = o.{column}
            GROUP BY 1 ORDER BY 1""", [kind]).fetchall()  # noqa: S608 - fixed column names
        out[kind] = {
            "mapped": {k: t for k, _, listed, t in rows if listed and t},
            "no_counterpart": [k for k, _, listed, t in rows if listed and not t],
            "unmapped": [k for k, _, listed, _t in rows if not listed],
            "rows_mapped": sum(n for _, n, listed, t in rows if listed and t),
            "rows": sum(n for _, n, _l, _t in rows),
        }
    return {"inferencex_identity": out}
