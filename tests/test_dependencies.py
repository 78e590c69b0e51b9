"""Every third-party package the production code imports is declared in pyproject.toml and
pinned in requirements.lock; tools/ imports nothing from tests/."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib

from tests.helpers import REPO

PRODUCTION = ("ingest", "warehouse", "api", "cli", "tools")
OWN = {"ingest", "warehouse", "api", "cli", "tools", "tests"}


def _imports(folder: str) -> dict[str, set[str]]:
    """Top-level module name -> files importing it, for every .py under ``folder``."""
    found: dict[str, set[str]] = {}
    for path in (REPO / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(REPO)))
    return found


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_package_is_declared_and_pinned():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {_normal(re.split(r"[<>=!~\[; ]", d)[0]) for d in pyproject["dependencies"]}
    dev = {_normal(re.split(r"[<>=!~\[; ]", d)[0])
           for d in pyproject["optional-dependencies"]["dev"]}
    pinned = {_normal(line.split("==")[0]) for line in (REPO / "requirements.lock").read_text()
              .splitlines() if "==" in line and not line.startswith("#")}
    distributions = importlib.metadata.packages_distributions()
    missing = []
    for folder in PRODUCTION:
        for module, files in _imports(folder).items():
            if module in sys.stdlib_module_names or module in OWN or module == "__future__":
                continue
            dists = {_normal(d) for d in distributions.get(module, [module])}
            allowed = declared | (dev if folder == "tools" else set())
            if not dists & allowed or not dists & pinned:
                missing.append(f"{module} ({', '.join(sorted(dists))}) in {sorted(files)[0]}")
    assert not missing, "imported but not declared in pyproject.toml or not pinned: " + \
        "; ".join(sorted(missing))


def test_tools_import_nothing_from_tests():
    assert "tests" not in _imports("tools"), _imports("tools")["tests"]
