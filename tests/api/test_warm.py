"""No stall after a start or a publish (#47): with ``api_warm`` (the default of a served API),
what a snapshot's answers share — the hot views, each list route's serving table — is built
before the snapshot serves: at start, before the first request, and after a publish in the
background while the previous snapshot keeps answering. Checked in DuckDB's own catalogue of
the API's in-memory tables."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from api.app import create_app
from ingest.refresh import refresh
from ingest.selfmeasured.load import Statement, import_spec
from tests.conftest import make_settings
from tests.helpers import copy_data_dir
from tests.ingest.selfmeasured.cases import VLLM

LIST = ["/v1/results?model=deepseek-r1", "/v1/ratios", "/v1/prices", "/v1/per-accelerator",
        "/v1/observations", "/v1/energy", "/v1/latency-bounds", "/v1/claims", "/v1/costs"]


def built(client: TestClient) -> set[str]:
    """The in-memory tables the snapshot being served holds (hot views and kept rows in
    ``memory``, serving tables in their compressed database)."""
    opened = client.app.state.reader.get()
    return {r[0] for r in opened.con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name IN ('memory', ?)",
        [opened.served_db]).fetchall()}


def test_a_started_api_has_built_what_its_routes_share_before_the_first_request(
        evidence_warehouse, tmp_path):
    copy_data_dir(evidence_warehouse / "var", tmp_path / "var")
    settings = make_settings(tmp_path, evidence_warehouse / "sources.toml", api_warm=True)
    with TestClient(create_app(settings)) as client:
        before = built(client)
        assert {"cost_input", "scenario_ratio"} <= before  # the hot views
        assert sum(n.startswith("serve_") for n in before) >= 8  # a serving table per route
        for path in LIST:
            assert client.get(path).status_code == 200
        assert built(client) == before  # the first requests built nothing more


def test_a_publish_is_warmed_in_the_background_while_the_previous_snapshot_answers(
        frontier_warehouse, tmp_path):
    copy_data_dir(frontier_warehouse / "var", tmp_path / "var")
    settings = make_settings(tmp_path, frontier_warehouse / "sources.toml", api_warm=True)
    with TestClient(create_app(settings)) as client:
        old = client.get("/v1/results").headers["x-snapshot-id"]
        report = refresh(settings, specs=[import_spec([VLLM], Statement(
            "nvidia-h100-sxm", 8, "gpt-oss-120b"))])
        assert report.status == "published"
        seen, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline:
            r = client.get("/v1/results")
            assert r.status_code == 200  # answered from the previous snapshot meanwhile
            seen.append(r.headers["x-snapshot-id"])
            if seen[-1] == report.snapshot_id:
                break
            time.sleep(0.02)
        assert seen[-1] == report.snapshot_id != old
        swapped_in = built(client)
        assert sum(n.startswith("serve_") for n in swapped_in) >= 8
        for path in LIST:
            assert client.get(path).headers["x-snapshot-id"] == report.snapshot_id
        assert built(client) == swapped_in  # built before it served, not on these requests


def test_the_api_connection_never_spills_into_the_current_directory(evidence_warehouse,
                                                                    tmp_path):
    """DuckDB's in-memory connections spill to ``.tmp`` in the current directory by default;
    the API's reads write nothing: its connection has no temp directory."""
    copy_data_dir(evidence_warehouse / "var", tmp_path / "var")
    with TestClient(create_app(make_settings(tmp_path, evidence_warehouse / "sources.toml"))) \
            as client:
        con = client.app.state.reader.get().con
        assert con.execute("SELECT current_setting('temp_directory')").fetchone() == ("",)
