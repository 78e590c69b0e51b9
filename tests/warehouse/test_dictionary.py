"""The data dictionary tells the truth (issue #36 item 6), on a warehouse loaded from every
carried source: a column whose comment names evidence labels holds only those labels; a
comment saying "always X" has exactly X wherever the column has values; and a view column
described by a table column's comment is that column passed through — read from the view's SQL
(DuckDB's own parse tree, not the declarations that made the comments) and checked against the
values both hold."""

from __future__ import annotations

import json
import re

import duckdb
import pytest

from warehouse.figures import derived
from warehouse.model.schema import empty_warehouse
from warehouse.model.vocabulary import Evidence

LABELS = [e.value for e in Evidence]


def named_labels(comment: str) -> set[str]:
    """The evidence labels a comment names, as whole words (``measured`` is not named by
    ``third_party_measured``)."""
    return {label for label in LABELS if re.search(rf"(?<![\w]){re.escape(label)}(?![\w])",
                                                   comment)}


def always(comment: str) -> str | None:
    """The value a comment says a column always holds (``always list_price``, ``Always
    priced here``, ``always derived: measured + assumption``), if it says one."""
    m = re.search(r"\balways ((?:derived: )?\w+(?: \+ \w+)*)", comment, re.IGNORECASE)
    return m[1] if m else None


@pytest.fixture(scope="module")
def con(all_sources_warehouse):
    var = all_sources_warehouse / "var"
    current = json.loads((var / "CURRENT").read_text())["file"]
    con = duckdb.connect(str(var / "snapshots" / current), read_only=True)
    yield con
    con.close()


def columns(con) -> list[tuple[str, str, str, str]]:
    """(relation, column, type, comment) of every table and view column."""
    return con.execute("""
        SELECT table_name, column_name, data_type, comment FROM duckdb_columns()
        WHERE schema_name = 'main' AND NOT internal ORDER BY table_name, column_index""").fetchall()


def distinct(con, relation: str, column: str) -> set:
    return {r[0] for r in con.execute(
        f'SELECT DISTINCT "{column}" FROM "{relation}" WHERE "{column}" IS NOT NULL').fetchall()}


def test_the_warehouse_has_rows_of_every_source_and_view(con):
    empty = [name for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() UNION ALL SELECT view_name FROM duckdb_views() "
        "WHERE NOT internal").fetchall()
        if con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] == 0]
    # rule_pin is empty unless sources.toml pins a round's rules; claim_history until a claim
    # is edited or withdrawn; mlperf_result_revision until a round is re-published with a
    # result revised or withdrawn, or a newer parser renames a result; self_import and
    # self_observation until the user imports runs
    assert empty == ["claim_history", "mlperf_result_revision", "rule_pin", "self_import",
                     "self_observation"], empty


def test_every_label_column_holds_only_the_labels_its_comment_names(con):
    checked = []
    for relation, column, kind, comment in columns(con):
        if kind != "VARCHAR":
            continue
        values = distinct(con, relation, column)
        holds_labels = column in ("evidence", "weakest_input") or (
            values and values <= set(LABELS))
        if not holds_labels:
            continue
        named = named_labels(comment)
        assert named, f"{relation}.{column} holds labels {values} but its comment names none"
        assert values <= named, (f"{relation}.{column}: comment {comment!r} names {named}, "
                                 f"the column holds {values}")
        checked.append((relation, column))
    # the relations of the issue among them
    for relation in ("claim_check", "claim_observation_check", "hardware_catalog",
                     "observation", "price_catalog", "round_rule", "mlperf_result", "claim"):
        assert (relation, "evidence") in checked


def test_a_comment_saying_always_x_has_exactly_x(con):
    said = 0
    for relation, column, _, comment in columns(con):
        label = always(comment or "")
        if label is None:
            continue
        said += 1
        values = {str(v) for v in distinct(con, relation, column)}
        if not values and relation in ("self_observation", "mlperf_result_revision"):
            continue  # empty until runs are imported, and until a round is re-published
        assert values == {label}, f"{relation}.{column}: {comment!r} but holds {values}"
    assert said >= 20


def test_a_basis_column_holds_only_the_bases_its_comment_spells_out(con):
    """Where a view's basis comment spells its bases out (not a claim's own label, written
    <…>), every basis the column holds is one of them, verbatim."""
    checked = 0
    for relation, column, _, comment in columns(con):
        if column != "basis" or relation not in derived.VIEWS or "<" in comment:
            continue
        checked += 1
        for value in distinct(con, relation, column):
            assert re.search(rf"{re.escape(value)}(?!\w| \+)", comment), (relation, value, comment)
    assert checked >= 8


def test_the_evidence_columns_the_issue_named_no_longer_say_always_measured(con):
    comments = {(r, c): m for r, c, _, m in columns(con)}
    assert comments[("price_catalog", "evidence")] == "Evidence label; always list_price."
    assert comments[("round_rule", "evidence")] == "Evidence label; always benchmark_rule."
    assert comments[("observation", "evidence")] == \
        "Evidence label: one of third_party_measured or self_measured."
    for view in ("claim_check", "claim_observation_check", "hardware_catalog"):
        assert "measured" not in named_labels(comments[(view, "evidence")]), view


# ------------------------------------------------------------------- lineage from the SQL


def _tree(con, sql: str) -> dict:
    return json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0])


def _from(node: dict | None, out: dict[str, tuple[str, object]]) -> None:
    """Aliases in a FROM clause: alias -> ("table", name) for a base table or view."""
    if node is None:
        return
    if node["type"] == "BASE_TABLE":
        out[node["alias"] or node["table_name"]] = ("table", node["table_name"])
    elif node["type"] == "SUBQUERY":  # its SELECT, read as a CTE is
        out[node["alias"]] = ("subquery", node["subquery"]["node"])
    elif node["type"] == "JOIN":
        _from(node["left"], out)
        _from(node["right"], out)


_SEEN: dict[tuple, dict[str, tuple[str, str]]] = {}


def lineage(con, node: dict, ctes: dict[str, dict]) -> dict[str, tuple[str, str]]:
    """Memoised ``_lineage`` (chained CTEs are read many times over)."""
    key = (json.dumps(node, sort_keys=True), tuple(sorted(ctes)))
    if key not in _SEEN:
        _SEEN[key] = _lineage(con, node, ctes)
    return _SEEN[key]


def _lineage(con, node: dict, ctes: dict[str, dict]) -> dict[str, tuple[str, str]]:
    """Output column -> (relation, column) for the columns a SELECT passes through unchanged
    (a bare column reference, or ``alias.*``), following common table expressions; a UNION BY
    NAME passes through what its first branch passes through, and the columns only a later
    branch has from that branch (other set operations and computed columns pass nothing)."""
    if node.get("type") == "SET_OPERATION_NODE" and node.get("setop_type") == "UNION_BY_NAME":
        scope = dict(ctes)
        for entry in node["cte_map"]["map"]:
            scope[entry["key"]] = entry["value"]["query_node"]
        out: dict[str, tuple[str, str]] = {}
        for child in node["children"]:
            for column, found in lineage(con, child, scope).items():
                out.setdefault(column, found)
        return out
    if node.get("type") != "SELECT_NODE":
        return {}
    scope = dict(ctes)
    for entry in node["cte_map"]["map"]:
        scope[entry["key"]] = entry["value"]["query_node"]
    aliases: dict[str, tuple[str, object]] = {}
    _from(node["from_table"], aliases)

    def origin(alias: str, column: str) -> tuple[str, str] | None:
        kind, name = aliases.get(alias, (None, None))
        if kind is None:
            return None
        if kind == "subquery":
            return lineage(con, name, scope).get(column)  # type: ignore[arg-type]
        if name in scope:  # a CTE: where its column comes from
            return lineage(con, scope[name], {k: v for k, v in scope.items() if k != name}).get(column)
        return (str(name), column)

    def relation_columns(alias: str) -> list[str]:
        kind, name = aliases[alias]
        if kind == "subquery":
            return list(lineage(con, name, scope))  # type: ignore[arg-type]
        if name in scope:
            # its pass-through columns (a CTE may read the CTEs before it)
            return list(lineage(con, scope[name], {k: v for k, v in scope.items() if k != name}))
        return [r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [name]).fetchall()]

    out: dict[str, tuple[str, str]] = {}
    for expr in node["select_list"]:
        if expr["class"] == "STAR":
            targets = [expr["relation_name"]] if expr["relation_name"] else list(aliases)
            for alias in targets:
                for column in relation_columns(alias):
                    found = origin(alias, column)
                    if found:
                        out[column] = found
        elif expr["class"] == "COLUMN_REF":
            names = expr["column_names"]
            alias = names[0] if len(names) == 2 else (next(iter(aliases)) if len(aliases) == 1 else "")
            found = origin(alias, names[-1])
            if found:
                out[expr["alias"] or names[-1]] = found
    return out


def base_origin(con, relation: str, column: str) -> tuple[str, str]:
    """The table column a view column is passed through from (following views), or the view
    column itself when it is computed there."""
    sql = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = ?", [relation]).fetchone()
    if sql is None:
        return (relation, column)
    text = sql[0].split(" AS ", 1)[1] if sql[0].upper().startswith("CREATE VIEW") else sql[0]
    found = lineage(con, _tree(con, text)["statements"][0]["node"], {}).get(column)
    return base_origin(con, *found) if found else (relation, column)


def test_a_view_column_with_a_tables_comment_is_that_column_passed_through():
    """Statically, on an empty warehouse: price_catalog.location once carried mlperf_result's
    comment ("Path of the result in the round's results repository"); it is Azure's region
    display name."""
    con = empty_warehouse()
    tables = {(t, c): m for t, c, m in con.execute(
        "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE table_name IN "
        "(SELECT table_name FROM duckdb_tables())").fetchall()}
    by_comment: dict[tuple[str, str], set[str]] = {}
    for (table, column), comment in tables.items():
        by_comment.setdefault((column, comment), set()).add(table)
    views = [r[0] for r in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
    assert set(views) == set(derived.VIEWS)
    wrong, copied = [], 0
    for view in views:
        for column, comment in con.execute("SELECT column_name, comment FROM duckdb_columns() "
                                           "WHERE table_name = ?", [view]).fetchall():
            sources = by_comment.get((column, comment))
            if not sources:
                continue
            copied += 1
            origin = base_origin(con, view, column)
            if origin[0] not in sources or origin[1] != column:
                wrong.append((view, column, comment, origin))
    assert wrong == []
    assert copied > 100  # pass-through columns are described by their tables


def test_a_view_column_with_a_tables_comment_holds_that_columns_values(con):
    tables = {(t, c): m for t, c, m in con.execute(
        "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE table_name IN "
        "(SELECT table_name FROM duckdb_tables())").fetchall()}
    views = [r[0] for r in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
    wrong = []
    for view in views:
        for column, comment in con.execute("SELECT column_name, comment FROM duckdb_columns() "
                                           "WHERE table_name = ?", [view]).fetchall():
            sources = [t for (t, c), m in tables.items() if c == column and m == comment]
            if not sources:
                continue
            union = " UNION ".join(f'SELECT CAST("{column}" AS VARCHAR) FROM "{t}"'
                                   for t in sources)
            extra = con.execute(f'SELECT DISTINCT CAST("{column}" AS VARCHAR) FROM "{view}" '
                                f'WHERE "{column}" IS NOT NULL EXCEPT ({union})').fetchall()
            if extra:
                wrong.append((view, column, sources, extra[:3]))
    assert wrong == []
