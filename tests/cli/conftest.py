"""A small published data directory for the command line's tests, and a way to run it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from cli.main import app
from warehouse import derived
from warehouse.schema import create_all
from warehouse.store import Layout


@pytest.fixture
def data_dir(tmp_path) -> Path:
    """A data directory with one published snapshot holding one source snapshot row."""
    layout = Layout(tmp_path / "var")
    layout.ensure()
    staging = layout.start_staging("20261201T000000000000Z-aaaaaa")
    con = duckdb.connect(str(staging))
    create_all(con)
    derived.install(con)
    con.execute("INSERT INTO source_snapshot VALUES ('s1', 'mlperf', 'mlperf_summary', 'v6.1', "
                "'https://x/summary.csv', ?, 'ab', 2, NULL, NULL, 'p/1', 'raw/ab/ab')",
                [datetime(2026, 11, 1, tzinfo=UTC)])
    con.close()
    layout.publish(staging, "20261201T000000000000Z-aaaaaa")
    return layout.root


@pytest.fixture
def perfledger(data_dir):
    """Run ``perfledger ARGS`` in this process on ``data_dir``: (exit code, stdout, stderr)."""
    def run(*args: str) -> tuple[int, str, str]:
        done = CliRunner().invoke(app, list(args), env={"PERFLEDGER_DATA_DIR": str(data_dir)})
        return done.exit_code, done.stdout, done.stderr
    return run
