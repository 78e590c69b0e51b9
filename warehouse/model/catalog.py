"""The data dictionary, from the comments the schema and the derived views carry."""

from __future__ import annotations

import duckdb


def entries(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Every table and view with its comment and columns (name, type, comment)."""
    rels = con.execute("""
        SELECT table_name AS name, 'table' AS kind, comment FROM duckdb_tables()
        WHERE schema_name = 'main'
        UNION ALL
        SELECT view_name, 'view', comment FROM duckdb_views()
        WHERE schema_name = 'main' AND NOT internal
        ORDER BY kind, name""").fetchall()
    out = []
    for name, kind, comment in rels:
        cols = con.execute(
            "SELECT column_name, data_type, comment FROM duckdb_columns() "
            "WHERE table_name = ? ORDER BY column_index", [name]).fetchall()
        out.append({"name": name, "kind": kind, "comment": comment or "",
                    "columns": [{"name": c, "type": t, "comment": m or ""} for c, t, m in cols]})
    return out


def dictionary(con: duckdb.DuckDBPyConnection) -> str:
    """The data dictionary as Markdown."""
    lines = []
    for e in entries(con):
        lines += [f"### `{e['name']}` ({e['kind']})", "", e["comment"], "",
                  "| column | type | meaning |", "|---|---|---|"]
        lines += [f"| {c['name']} | {c['type']} | {c['comment']} |" for c in e["columns"]]
        lines.append("")
    return "\n".join(lines)
