"""Export a snapshot for other engines: every table and view as one Parquet or CSV file, plus a
manifest (snapshot id, sources, row counts, sha256 of each file). DuckDB's COPY writes them."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from warehouse.catalog import entries
from warehouse.db import fetch_dicts, scalar
from warehouse.exceptions import ConfigError
from warehouse.store import SnapshotRef


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def export(ref: SnapshotRef, out: Path, fmt: str = "parquet") -> dict:
    """Write every relation of the snapshot to ``out`` and return the manifest (also written
    as ``out/manifest.json``)."""
    if fmt not in ("parquet", "csv"):
        raise ConfigError(f"export format must be parquet or csv, not {fmt!r}")
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(ref.path), read_only=True)
    try:
        files = []
        for rel in entries(con):
            name = rel["name"]
            target = out / f"{name}.{fmt}"
            options = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER true)"
            # Names come from the catalog; COPY takes no bound file name, so the path is quoted.
            quoted = '"' + name.replace('"', '""') + '"'
            literal = "'" + target.as_posix().replace("'", "''") + "'"
            con.execute(f"COPY (SELECT * FROM {quoted}) TO {literal} {options}")  # noqa: S608
            files.append({"name": name, "kind": rel["kind"], "file": target.name,
                          "rows": scalar(con, f"SELECT count(*) FROM {quoted}"),  # noqa: S608
                          "sha256": _sha256(target), "comment": rel["comment"]})
        sources = fetch_dicts(con, "SELECT id, source, label, url, fetched_at, sha256 "
                                   "FROM source_snapshot ORDER BY source, label")
    finally:
        con.close()
    manifest = {"snapshot_id": ref.id, "published_at": ref.published_at.isoformat(),
                "exported_at": datetime.now(UTC).isoformat(), "format": fmt,
                "files": files, "sources": sources}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str))
    return manifest
