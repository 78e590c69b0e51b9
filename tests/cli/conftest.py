"""Run the command line in this process on a small published data directory."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli.main import app


@pytest.fixture
def perfledger(data_dir):
    """Run ``perfledger ARGS`` in this process on ``data_dir``: (exit code, stdout, stderr)."""
    def run(*args: str) -> tuple[int, str, str]:
        done = CliRunner().invoke(app, list(args), env={"PERFLEDGER_DATA_DIR": str(data_dir)})
        return done.exit_code, done.stdout, done.stderr
    return run
