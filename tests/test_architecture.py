"""The floor plan is enforced: import-linter's contracts (pyproject.toml) hold on the code, and
they fail when an import goes the wrong way (proved on a copy of the packages)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

LINT = Path(sys.executable).parent / "lint-imports"
PACKAGES = ("cli", "api", "ingest", "warehouse")


def lint(root: Path) -> subprocess.CompletedProcess:
    """lint-imports with ``root`` first on the path, its pyproject.toml as the config."""
    return subprocess.run([str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"],
                          cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)


def test_the_contracts_hold_on_the_repository():
    done = lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


@pytest.fixture
def copy(tmp_path) -> Path:
    for name in PACKAGES:
        shutil.copytree(REPO / name, tmp_path / name,
                        ignore=shutil.ignore_patterns("__pycache__", "static"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize("module, line, contract", [
    ("warehouse/storage/db.py", "import ingest.http", "cli on top; api and ingest stand on warehouse"),
    ("api/errors.py", "from ingest import refresh", "cli on top; api and ingest stand on warehouse"),
    ("warehouse/queries/listing.py", "import api.app", "cli on top; api and ingest stand on warehouse"),
    ("ingest/mlperf/parse.py", "from ingest.azure_prices import parse",
     "each source folder stands alone"),
    ("api/responses.py", "import warehouse.quality.validation", "the API never loads the write side"),
])
def test_an_import_against_the_layers_breaks_a_contract(copy, module, line, contract):
    target = copy / module
    target.write_text(target.read_text() + f"\n{line}  # added by the test\n")
    done = lint(copy)
    assert done.returncode != 0
    assert f"{contract}" in done.stdout and "BROKEN" in done.stdout, done.stdout
