"""The API documents itself: every endpoint and parameter described, an example response per
endpoint, tags; and the README documents every route, setting and CLI command."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from api.app import create_app
from tests.helpers import REPO
from warehouse.settings import Settings

README = (REPO / "README.md").read_text()


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    app = create_app(Settings(data_dir=tmp_path_factory.mktemp("empty")))
    return app.openapi()


def operations(schema):
    for path, item in schema["paths"].items():
        for method, op in item.items():
            yield path, method, op


def test_every_operation_is_documented(schema):
    ops = list(operations(schema))
    assert len(ops) >= 30
    for path, method, op in ops:
        assert method == "get", f"{method.upper()} {path}: the API is read-only"
        assert op.get("summary"), path
        assert op.get("description"), f"{path}: no docstring"
        assert op.get("tags"), path
        example = op["responses"]["200"].get("content", {}).get("application/json", {})
        assert "example" in example, f"{path}: no example response (python -m tools.make_examples)"
        for param in op.get("parameters", []):
            assert param.get("description"), f"{path}: parameter {param['name']} undocumented"


def test_docs_pages_are_served(tmp_path):
    from fastapi.testclient import TestClient
    client = TestClient(create_app(Settings(data_dir=tmp_path)))
    assert client.get("/openapi.json").status_code == 200
    assert "swagger" in client.get("/docs").text.lower()


def test_readme_lists_every_route(schema):
    for path in schema["paths"]:
        assert path in README, f"README does not mention {path}"


def test_every_setting_is_documented():
    for name, field in Settings.model_fields.items():
        assert field.description, f"setting {name} has no description"
        env = f"PERFLEDGER_{name.upper()}"
        assert env in README, f"README does not document {env}"


def test_every_cli_command_is_documented():
    out = subprocess.run([Path(sys.executable).parent / "perfledger", "--help"],
                         capture_output=True, text=True, timeout=60).stdout
    commands = re.findall(r"│ (\w+)\s{2,}", out)
    assert {"refresh", "serve", "sql", "validate", "describe", "export", "calc"} <= set(commands)
    for command in commands:
        assert f"perfledger {command}" in README, f"README does not show `perfledger {command}`"


def test_data_dictionary_file_matches_the_schema():
    import duckdb

    from warehouse.figures import derived
    from warehouse.model.catalog import dictionary
    from warehouse.model.schema import create_all

    con = duckdb.connect()
    create_all(con)
    derived.install(con)
    blank = con.execute("SELECT table_name, column_name FROM duckdb_columns() "
                        "WHERE comment IS NULL AND NOT internal").fetchall()
    assert blank == [], "columns without a COMMENT"
    current = (REPO / "docs" / "DATA_DICTIONARY.md").read_text()
    assert current == dictionary(con) + "\n", "regenerate: perfledger describe > docs/DATA_DICTIONARY.md"


def resolve(schema: dict, node: dict) -> dict:
    """Follow a ``$ref`` (and a single-item ``allOf``) inside the OpenAPI document."""
    while "$ref" in node or ("allOf" in node and len(node["allOf"]) == 1):
        node = node["allOf"][0] if "allOf" in node else node
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            node = schema["components"]["schemas"][name]
    return node


def test_every_route_declares_its_200_schema(schema):
    for path, _, op in operations(schema):
        body = op["responses"]["200"]["content"]["application/json"].get("schema")
        assert body, f"{path}: no 200 schema"
        assert resolve(schema, body).get("properties"), f"{path}: empty 200 schema"


def test_list_routes_declare_their_row_columns(schema):
    """Every list route's envelope names the Public model of its rows, and that model lists
    real columns (the ones the route returns)."""
    lists = 0
    for path, _, op in operations(schema):
        envelope = resolve(schema, op["responses"]["200"]["content"]["application/json"]["schema"])
        rows = envelope["properties"].get("rows")
        if rows is None or "next" not in envelope["properties"]:
            continue
        lists += 1
        row = resolve(schema, rows["items"])
        assert len(row["properties"]) >= 2, path
        assert all(p.get("description") for p in row["properties"].values()), path
    assert lists >= 13


def test_list_routes_declare_their_row_formats(schema):
    lists = [op for _, _, op in operations(schema)
             if "ListPage_" in op["responses"]["200"]["content"]["application/json"]
             .get("schema", {}).get("$ref", "")]
    assert len(lists) >= 13
    for op in lists:
        assert {"text/csv", "application/x-ndjson", "application/vnd.apache.parquet"} <= \
            set(op["responses"]["200"]["content"])


def test_the_source_filter_names_every_source():
    """/v1/sources?source= documents every source a snapshot can hold, `import`'s too."""
    from api.routes.provenance import SourceParams
    from ingest.registry import SOURCES

    said = SourceParams.model_fields["source"].description or ""
    assert [s.name for s in SOURCES if s.name not in said] == []
    assert "selfmeasured" in said
