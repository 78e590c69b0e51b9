"""The recorded InferenceX payloads (tests/cases/inferencex, see PROVENANCE.md) and a sources
file that points the source at a local server serving them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.conftest import write_sources
from tests.helpers import CASES, REPO, LocalServer

DIR = CASES / "inferencex"
ALIASES = REPO / "data" / "inferencex.yaml"
BENCHMARKS = "/api/v1/benchmarks"
AVAILABILITY = "/api/v1/availability"


def case(name: str) -> bytes:
    """The uncompressed bytes of a recorded payload."""
    return gzip.decompress((DIR / f"{name}.json.gz").read_bytes())


def rows(name: str) -> list[dict]:
    return json.loads(case(name))


def lookup_rows() -> list[dict]:
    """The five verbatim September-2026 rows of the skills' lookup example."""
    return json.loads(case("lookup"))["sample_rows"]


def serve(server: LocalServer, benchmarks: bytes | None = None) -> None:
    """Availability and one benchmarks body on the local server (any model)."""
    server.files[AVAILABILITY] = case("availability")
    server.files[BENCHMARKS] = case("benchmarks") if benchmarks is None else benchmarks


def sources(path: Path, server: LocalServer, *, models: str = '["dsr1"]', extra: str = "",
            aliases: Path = ALIASES, **tables: str) -> Path:
    """A sources file with only InferenceX on (plus ``tables``), at the local server."""
    write_sources(path, **tables)
    with path.open("a") as f:
        f.write(inferencex_section(server, models=models, extra=extra, aliases=aliases))
    return path


def inferencex_section(server: LocalServer, *, models: str = '["dsr1"]', extra: str = "",
                       aliases: Path = ALIASES) -> str:
    """The [inferencex] table of a sources file pointing at the local server."""
    return (f'\n[inferencex]\nenabled = true\nbase_url = "{server.url("")}"\n'
            f'models = {models}\naliases = "{aliases}"\n{extra}\n')
