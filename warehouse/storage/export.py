"""Export a snapshot for other engines: every table and view as one Parquet or CSV file, plus a
manifest (snapshot id, sources, row counts, columns with their types and comments, sha256 of
each file). Parquet files carry the comments too: each column's in its field metadata
(``comment``), the relation's in the schema metadata. DuckDB's COPY writes the CSV files,
pyarrow the Parquet ones from DuckDB's Arrow output (batch by batch)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from warehouse.exceptions import ConfigError, ExportError, io_reason
from warehouse.model.catalog import entries
from warehouse.storage.db import fetch_dicts, scalar
from warehouse.storage.store import SnapshotRef


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def parquet_schema(schema, comments: dict[str, str], comment: str | None = None):
    """``schema`` (Arrow) as written to Parquet: decimals as doubles (so pandas reads floats,
    not ``decimal.Decimal`` objects), each column's comment in its field metadata and the
    relation's in the schema metadata."""
    import pyarrow as pa

    fields = []
    for f in schema:
        kind = pa.float64() if pa.types.is_decimal(f.type) else f.type
        text = comments.get(f.name)
        fields.append(pa.field(f.name, kind, nullable=True,
                               metadata={"comment": text} if text else None))
    return pa.schema(fields, metadata={"comment": comment} if comment else None)


def for_parquet(table, comments: dict[str, str], comment: str | None = None):
    """An Arrow table cast to ``parquet_schema``."""
    return table.cast(parquet_schema(table.schema, comments, comment))


def _write_parquet(con: duckdb.DuckDBPyConnection, quoted: str, target: Path,
                   rel: dict) -> None:
    import pyarrow.parquet as pq

    comments = {c["name"]: c["comment"] for c in rel["columns"]}
    cur = con.cursor()  # the reader holds its cursor until closed
    try:
        reader = cur.sql(f"SELECT * FROM {quoted}").to_arrow_reader(100_000)  # noqa: S608
        schema = parquet_schema(reader.schema, comments, rel["comment"])
        with pq.ParquetWriter(target, schema) as writer:
            for batch in reader:
                writer.write_batch(batch.cast(schema))
    finally:
        cur.close()


# A text cell a spreadsheet would run as a formula starts with one of these (OWASP, "CSV
# Injection"); in CSV such a cell is written with a leading apostrophe, which spreadsheets show
# as text. Numbers are never touched: only text columns are escaped.
FORMULA_START = r"^[=+\-@\t\r]"


def csv_select(quoted: str, columns: list[dict], escape: bool = True) -> str:
    """The SELECT a CSV file of ``quoted`` is written from: every text column escaped for
    spreadsheets (``FORMULA_START``) unless ``escape`` is false."""
    if not escape:
        return f"SELECT * FROM {quoted}"  # noqa: S608
    picked = []
    for c in columns:
        name = '"' + c["name"].replace('"', '""') + '"'
        if c["type"] == "VARCHAR":
            picked.append(f"CASE WHEN regexp_matches({name}, '{FORMULA_START}') "
                          f"THEN chr(39) || {name} ELSE {name} END AS {name}")
        else:
            picked.append(name)
    return f"SELECT {', '.join(picked)} FROM {quoted}"  # noqa: S608


def export(ref: SnapshotRef, out: Path, fmt: str = "parquet", *,
           csv_escape: bool = True, force: bool = False) -> dict:
    """Write every relation of the snapshot to ``out`` and return the manifest (also written
    as ``out/manifest.json``). CSV text cells that a spreadsheet would run as a formula are
    written with a leading apostrophe unless ``csv_escape`` is false.

    Files are written to a hidden folder first and moved into ``out`` only when all of them
    are: a failure (a full disk, an unwritable folder) raises ``ExportError`` in one line and
    leaves nothing behind. A file of the same name already in ``out`` is replaced only with
    ``force`` (``ConfigError`` otherwise, before anything is written); other files are left."""
    if fmt not in ("parquet", "csv"):
        raise ConfigError(f"export format must be parquet or csv, not {fmt!r}")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} exists and is not a directory; give a directory to export to")
    con = duckdb.connect(str(ref.path), read_only=True)
    work: Path | None = None
    written: list[str] = []  # the files begun, in order: the last one is where it failed
    try:
        relations = entries(con)
        names = ["manifest.json", *(f"{rel['name']}.{fmt}" for rel in relations)]
        clash = [n for n in names if (out / n).exists()]
        if clash and not force:
            raise ConfigError(f"{out} already holds {', '.join(clash[:3])}"
                              + (f" and {len(clash) - 3} more" if len(clash) > 3 else "")
                              + "; pass --force to replace them, or export elsewhere")
        out.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".perfledger-export-",
                                     dir=out if out.is_dir() else out.parent))
        manifest = _write_all(con, ref, relations, work, fmt, csv_escape, written)
        _move_in(work, out, names)
    except (OSError, duckdb.Error) as e:
        doing = f" writing {written[-1]}" if written else ""
        raise ExportError(f"export to {out} failed{doing}, nothing was written: "
                          f"{io_reason(e, work)}") from e
    finally:
        con.close()
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    return manifest


def _write_all(con: duckdb.DuckDBPyConnection, ref: SnapshotRef, relations: list[dict],
               work: Path, fmt: str, csv_escape: bool, written: list[str]) -> dict:
    """Write each relation and the manifest to ``work`` (naming each file in ``written``
    before writing it); returns the manifest."""
    files = []
    for rel in relations:
        name = rel["name"]
        target = work / f"{name}.{fmt}"
        written.append(target.name)
        quoted = '"' + name.replace('"', '""') + '"'  # names come from the catalog
        if fmt == "parquet":
            _write_parquet(con, quoted, target, rel)
        else:  # COPY takes no bound file name, so the path is quoted
            literal = "'" + target.as_posix().replace("'", "''") + "'"
            select = csv_select(quoted, rel["columns"], csv_escape)
            con.execute(f"COPY ({select}) TO {literal} (FORMAT csv, HEADER true)")
        files.append({"name": name, "kind": rel["kind"], "file": target.name,
                      "rows": scalar(con, f"SELECT count(*) FROM {quoted}"),  # noqa: S608
                      "sha256": _sha256(target), "comment": rel["comment"],
                      "columns": rel["columns"]})
    sources = fetch_dicts(con, "SELECT id, source, label, url, fetched_at, sha256 "
                               "FROM source_snapshot ORDER BY source, label")
    manifest = {"snapshot_id": ref.id, "published_at": ref.published_at.isoformat(),
                "exported_at": datetime.now(UTC).isoformat(), "format": fmt,
                "csv_formulas_escaped": fmt == "csv" and csv_escape,
                "files": files, "sources": sources}
    written.append("manifest.json")
    with (work / "manifest.json").open("w") as f:
        json.dump(manifest, f, indent=2, default=str)
        f.flush()
        os.fsync(f.fileno())
    return manifest


def _move_in(work: Path, out: Path, names: list[str]) -> None:
    """Put the finished files in ``out``: the whole folder renamed when ``out`` is new, else
    each file moved over its namesake (a rename on the same file system: no copy to fail)."""
    if not out.exists():
        work.chmod(0o755)  # mkdtemp's folder is private; an export is for others to read
        work.rename(out)
        return
    for name in names:
        os.replace(work / name, out / name)
