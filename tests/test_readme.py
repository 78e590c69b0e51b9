"""Every example in the README runs against a warehouse built from the real files (both MLPerf
rounds, the rules, the curated files, the recorded Azure prices) and answers something: each
SQL statement returns rows, each curl and dashboard request a 200 with rows, each CLI line
its documented output. The examples are read from the README itself, so a new one is checked
the day it is written."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import duckdb
import pytest

from tests.helpers import REPO

README = (REPO / "README.md").read_text()
BIN = Path(sys.executable).parent


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _statements() -> list[str]:
    out = []
    for block in _blocks("sql"):
        for stmt in block.split(";"):
            code = "\n".join(line for line in stmt.splitlines()
                             if line.strip() and not line.strip().startswith("--"))
            if code:
                out.append(code)
    return out


def _requests() -> list[str]:
    curls = re.findall(r"curl '(http://127\.0\.0\.1:8000[^']+)'", README)
    gets = re.findall(r"`GET (/[^`\s]+)`", README)
    return [urlsplit(u).path + ("?" + urlsplit(u).query if urlsplit(u).query else "")
            for u in curls] + gets


def _cli_lines() -> list[str]:
    return [line.split("  #")[0].strip() for block in _blocks("sh") for line in block.splitlines()
            if line.startswith(".venv/bin/perfledger")]


STATEMENTS, REQUESTS, CLI = _statements(), _requests(), _cli_lines()


def test_the_readme_has_the_examples_this_file_checks():
    """Parsing the README found what it shows (a broken fence would otherwise skip them)."""
    assert len(STATEMENTS) >= 9 and len(REQUESTS) >= 10 and len(CLI) >= 3
    assert len(_blocks("python")) == 1 and len(_blocks("cron")) == 1


@pytest.fixture(scope="module")
def snapshot_file(evidence_warehouse) -> Path:
    current = json.loads((evidence_warehouse / "var" / "CURRENT").read_text())["file"]
    return evidence_warehouse / "var" / "snapshots" / current


@pytest.mark.parametrize("sql", STATEMENTS, ids=[s.splitlines()[0][:60] for s in STATEMENTS])
def test_every_sql_example_returns_rows(snapshot_file, sql):
    con = duckdb.connect(str(snapshot_file), read_only=True)
    try:
        rows = con.execute(sql).fetchall()
    finally:
        con.close()
    assert rows, f"README example returns no rows:\n{sql}"


@pytest.mark.parametrize("url", REQUESTS)
def test_every_http_example_answers_rows(evidence_client, url):
    r = evidence_client.get(url)
    assert r.status_code == 200, r.text
    if "csv" in r.headers["content-type"]:
        assert len(r.text.splitlines()) >= 2, f"{url}: a header and no rows"
    elif "rows" in r.json():
        body = r.json()
        assert body["total"] >= 1 and body["rows"], f"{url}: no rows ({body.get('hint')})"
        whole = evidence_client.get(re.sub(r"&columns=[^&]*", "", url)).json()["rows"]
        if url.startswith("/v1/costs"):  # a cost panel shows costs, not 'no price' rows
            assert all(row["cost_per_million_tokens"] is not None for row in whole), url
        if url.startswith("/v1/prices/history"):  # one price's versions, not a mix of offers
            assert len({(row["offer"], row["os"], row["reservation_term"]) for row in whole}) == 1


@pytest.fixture
def env(evidence_warehouse, tmp_path) -> dict[str, str]:
    return {**os.environ, "PERFLEDGER_DATA_DIR": str(evidence_warehouse / "var"),
            "PERFLEDGER_SOURCES": str(evidence_warehouse / "sources.toml"), "TMPDIR": str(tmp_path)}


@pytest.mark.parametrize("line", CLI)
def test_every_cli_example_runs(env, tmp_path, line):
    args = shlex.split(line)
    args[0] = str(BIN / "perfledger")
    if "--out" in args:  # write where the test can look
        args[args.index("--out") + 1] = str(tmp_path / "export")
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr
    if args[1:2] == ["export"]:
        manifest = json.loads((tmp_path / "export" / "manifest.json").read_text())
        assert all(f["rows"] >= 0 for f in manifest["files"]) and manifest["files"]
    elif "-c" in args:
        assert "Offline" in done.stdout and "Server" in done.stdout
    else:  # no terminal: it says where the snapshot is and how to open it
        assert "current snapshot:" in done.stdout and ".duckdb" in done.stdout


def test_the_python_example_opens_the_current_snapshot(evidence_warehouse):
    code = _blocks("python")[0] + (
        "\nprint(con.execute('SELECT count(*) FROM mlperf_result').fetchone()[0])\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=evidence_warehouse,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 1000


def test_the_cron_example_uses_flags_the_command_has(env):
    line = _blocks("cron")[0].strip()
    command = line.split("&&", 1)[1].split()
    flags = [a for a in command if a.startswith("--")]
    assert command[0] == ".venv/bin/perfledger" and command[1] == "refresh" and flags
    done = subprocess.run([str(BIN / "perfledger"), "refresh", "--help"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and all(f in done.stdout for f in flags), done.stdout


def test_the_sql_section_names_every_table_and_view():
    """#48: the README's relation list left InferenceX (and later sources) out; it must name
    every relation an analyst finds in the warehouse, with its kind."""
    from warehouse.model.schema import empty_warehouse

    con = empty_warehouse()
    relations = set(con.execute(
        "SELECT table_name, 'table' FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL "
        "SELECT view_name, 'view' FROM duckdb_views() WHERE NOT internal").fetchall())
    text = (REPO / "README.md").read_text()
    listed = set(re.findall(r"^\| `(\w+)` \| (table|view) \|", text, re.M))
    assert listed == relations
