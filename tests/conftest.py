"""Shared fixtures: a real local HTTP server, isolated settings, a published warehouse."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from ingest.refresh import refresh
from tests.azure_emulator import AzureEmulator, seed_items
from tests.helpers import (
    REPO,
    RULES_ADOC,
    SUMMARY_CSV,
    V51_JSON,
    LocalServer,
    copy_data_dir,
)
from warehouse.settings import Settings
from warehouse.storage.store import Layout


@pytest.fixture(scope="session")
def session_server():
    s = LocalServer().start()
    yield s
    s.stop()


@pytest.fixture
def server(session_server):
    """The session's real local HTTP server, emptied for this test."""
    session_server.reset()
    yield session_server
    session_server.reset()


def write_sources(path: Path, **tables: str) -> Path:
    """A sources.toml with the given tables (TOML text per source); others disabled."""
    text = []
    for name in ("mlperf", "mlperf_rules", "azure_prices", "curated"):
        body = tables.get(name)
        text.append(f"[{name}]\n" + (body if body is not None else "enabled = false") + "\n")
    path.write_text("\n".join(text))
    return path


def make_settings(tmp: Path, sources: Path, **kw) -> Settings:
    """Settings of a test's data dir: a published snapshot serves at the next request (no
    warm-up first, unless ``api_warm=True``)."""
    kw.setdefault("api_warm", False)
    return Settings(data_dir=tmp / "var", sources=sources, http_retries=kw.pop("http_retries", 2),
                    http_backoff=0.01, http_max_wait=0.2, snapshot_check_interval=0, **kw)


@contextmanager
def private_client(warehouse: Path, tmp: Path) -> Iterator[TestClient]:
    """An API client over a private copy (in ``tmp``) of a warehouse a fixture built, its
    snapshot reader closed after."""
    copy_data_dir(warehouse / "var", tmp / "var")
    client = TestClient(create_app(make_settings(tmp, warehouse / "sources.toml")))
    try:
        yield client
    finally:
        client.app.state.reader.close()
        client.close()


AZURE_PATH = "/api/retail/prices"


def mount_azure(server: LocalServer, items: list[dict] | None = None, **kw) -> AzureEmulator:
    """Serve the Azure Retail Prices emulator at AZURE_PATH on the local server."""
    emulator = AzureEmulator(items if items is not None else seed_items(),
                             base_url=server.url(AZURE_PATH), **kw)
    server.handlers[AZURE_PATH] = emulator
    return emulator


def azure_table(server: LocalServer) -> str:
    return f'url = "{server.url(AZURE_PATH)}"'


def full_sources(path: Path, server: LocalServer | None = None, **over: str) -> Path:
    """Sources for the real MLPerf CSV and rules (the copies carried in tests/cases, as paths),
    the repository's curated data and, given a server, the Azure emulator on it."""
    tables = {"mlperf": f'rounds = {{ "v6.1" = "{SUMMARY_CSV}" }}',
              "mlperf_rules": f'url = "{RULES_ADOC}"',
              "curated": f'dir = "{REPO / "data"}"'}
    if server is not None:
        tables["azure_prices"] = azure_table(server)
    tables.update(over)
    return write_sources(path, **tables)


@pytest.fixture(scope="session")
def full_warehouse(tmp_path_factory, session_server) -> Path:
    """A data directory published once from the real v6.1 CSV, the real rules document, the
    curated files and the recorded Azure price items (served by the emulator, 4 per page)."""
    tmp = tmp_path_factory.mktemp("full")
    session_server.reset()
    mount_azure(session_server, page_size=4)
    sources = full_sources(tmp / "sources.toml", session_server)
    report = refresh(make_settings(tmp, sources))
    session_server.reset()
    assert report.status == "published", report.as_dict()
    return tmp


@pytest.fixture(scope="session")
def rounds_warehouse(tmp_path_factory) -> Path:
    """A data directory published once from two rounds in their two formats (the real v5.1
    summary_results.json and v6.1 summary.csv), the real rules and the curated files."""
    tmp = tmp_path_factory.mktemp("rounds")
    sources = full_sources(tmp / "sources.toml",
                           mlperf=f'rounds = {{ "v5.1" = "{V51_JSON}", "v6.1" = "{SUMMARY_CSV}" }}')
    report = refresh(make_settings(tmp, sources))
    assert report.status == "published", report.as_dict()
    return tmp


@pytest.fixture(scope="session")
def evidence_warehouse(tmp_path_factory, session_server) -> Path:
    """Everything at once, as the README's examples need it: both rounds in their two formats,
    the rules, the curated files and the recorded Azure prices (served by the emulator)."""
    tmp = tmp_path_factory.mktemp("evidence")
    session_server.reset()
    mount_azure(session_server, page_size=4)
    sources = full_sources(tmp / "sources.toml", session_server,
                           mlperf=f'rounds = {{ "v5.1" = "{V51_JSON}", "v6.1" = "{SUMMARY_CSV}" }}')
    report = refresh(make_settings(tmp, sources))
    session_server.reset()
    assert report.status == "published", report.as_dict()
    return tmp


@pytest.fixture(scope="session")
def all_sources_warehouse(tmp_path_factory, session_server) -> Path:
    """Every carried source at once: both MLPerf rounds in their two formats, the rules, the
    curated files, the recorded Azure prices, the recorded InferenceX payloads and the carried
    SkyPilot catalog samples (served by the local server)."""
    return with_inferencex(tmp_path_factory.mktemp("all_sources"), session_server, clouds=True,
                           mlperf=f'rounds = {{ "v5.1" = "{V51_JSON}", "v6.1" = "{SUMMARY_CSV}" }}')


@pytest.fixture(scope="session")
def frontier_warehouse(tmp_path_factory, session_server) -> Path:
    """The full warehouse (v6.1) with the recorded InferenceX payloads: MLPerf results on the
    frontier's axes."""
    return with_inferencex(tmp_path_factory.mktemp("frontier"), session_server)


def with_inferencex(tmp: Path, server: LocalServer, *, clouds: bool = False, **over: str) -> Path:
    """A data directory published from ``full_sources`` (``over`` replacing tables), the
    recorded Azure prices and the recorded InferenceX payloads, served by ``server`` (and with
    ``clouds``, the carried SkyPilot catalog samples)."""
    from tests.ingest.cloud_prices import cases as catalog
    from tests.ingest.inferencex.cases import inferencex_section, serve  # imports this module

    server.reset()
    serve(server)
    mount_azure(server, page_size=50)
    path = full_sources(tmp / "sources.toml", server, **over)
    path.write_text(path.read_text() + inferencex_section(server)
                    + (catalog.serve(server) if clouds else ""))
    report = refresh(make_settings(tmp, path))
    server.reset()
    assert report.status == "published", report.as_dict()
    return tmp


@pytest.fixture
def evidence_client(evidence_warehouse, tmp_path, client_for):
    """An API client over a private copy of the everything-at-once warehouse."""
    copy_data_dir(evidence_warehouse / "var", tmp_path / "var")
    return client_for(make_settings(tmp_path, evidence_warehouse / "sources.toml"))


@pytest.fixture
def rounds_client(rounds_warehouse, tmp_path, client_for):
    """An API client over a private copy of the two-round warehouse."""
    copy_data_dir(rounds_warehouse / "var", tmp_path / "var")
    return client_for(make_settings(tmp_path, rounds_warehouse / "sources.toml"))


@pytest.fixture
def full_copy(full_warehouse, tmp_path) -> tuple[Path, Path]:
    """A private copy of the full warehouse: (tmp dir, sources file)."""
    copy_data_dir(full_warehouse / "var", tmp_path / "var")
    return tmp_path, full_warehouse / "sources.toml"


@pytest.fixture
def full_client(full_copy, client_for):
    """An API client over a private copy of the full warehouse."""
    tmp, sources = full_copy
    return client_for(make_settings(tmp, sources))


@pytest.fixture
def client_for():
    clients = []

    def make(settings: Settings) -> TestClient:
        c = TestClient(create_app(settings))
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.app.state.reader.close()
        c.close()


@pytest.fixture(scope="session")
def http_published(session_server, tmp_path_factory) -> tuple[Path, bytes]:
    """A data directory published once from the real CSV served at /summary.csv."""
    body = SUMMARY_CSV.read_bytes()
    session_server.reset()
    session_server.files["/summary.csv"] = body
    tmp = tmp_path_factory.mktemp("http_published")
    sources = write_sources(tmp / "sources.toml",
                            mlperf=f'rounds = {{ "v6.1" = "{session_server.url("/summary.csv")}" }}')
    report = refresh(make_settings(tmp, sources))
    assert report.status == "published", report.message
    session_server.reset()
    return tmp, body


def publish_small(layout: Layout, snapshot_id: str, label: str = "v6.1") -> Path:
    """Publish a snapshot with every table and one source snapshot row (``label``) to
    ``layout``; returns its file."""
    import hashlib
    from datetime import UTC, datetime

    import duckdb

    from warehouse.figures import derived
    from warehouse.model.schema import create_all

    staging = layout.start_staging(snapshot_id)
    con = duckdb.connect(str(staging))
    if layout.read_current() is None:
        create_all(con)
        derived.install(con)
    body = label.encode()
    sha = hashlib.sha256(body).hexdigest()
    con.execute("DELETE FROM source_snapshot")
    con.execute("INSERT INTO source_snapshot VALUES ('s1', 'mlperf', 'mlperf_summary', ?, "
                "'https://x/summary.csv', ?, ?, ?, NULL, NULL, 'p/1', ?)",
                [label, datetime(2026, 11, 1, tzinfo=UTC), sha, len(body),
                 layout.save_raw(body, sha)])
    con.close()
    return layout.publish(staging, snapshot_id).path


@pytest.fixture
def data_dir(tmp_path) -> Path:
    """A data directory with one small published snapshot (``publish_small``)."""
    layout = Layout(tmp_path / "var")
    layout.ensure()
    publish_small(layout, "20261201T000000000000Z-aaaaaa")
    return layout.root
