"""Run the command line in this process on a small published data directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.conftest import write_sources


@pytest.fixture
def perfledger(data_dir, tmp_path):
    """Run ``perfledger ARGS`` in this process on ``data_dir`` (or ``data=``), every source
    switched off: (exit code, stdout, stderr)."""
    sources = write_sources(tmp_path / "off.toml")

    def run(*args: str, data: Path | None = None) -> tuple[int, str, str]:
        done = CliRunner().invoke(app, list(args), env={
            "PERFLEDGER_DATA_DIR": str(data or data_dir), "PERFLEDGER_SOURCES": str(sources)})
        return done.exit_code, done.stdout, done.stderr
    return run
