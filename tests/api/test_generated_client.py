"""A client generated from the OpenAPI document (openapi-python-client, offline, into a tmp dir)
reads a list and an item and gets a typed error: the document is enough to build a client,
errors included."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The real v6.1 row DESIGN.md cites: GB200 NVL72, DeepSeek-R1 Interactive, 240,274 tokens/s.
GB200_ID, GB200_RESULT = "9bb82bbc93897023", 240274.0


@pytest.fixture(scope="module")
def client_package(tmp_path_factory):
    from api.app import create_app
    from warehouse.settings import Settings

    tmp = tmp_path_factory.mktemp("generated")
    document = tmp / "openapi.json"
    document.write_text(json.dumps(create_app(Settings(data_dir=tmp / "empty")).openapi()))
    bin_dir = Path(sys.executable).parent
    subprocess.run([bin_dir / "openapi-python-client", "generate", "--path", document,
                    "--meta", "none", "--output-path", tmp / "perfledger_client",
                    "--fail-on-warning"], check=True, cwd=tmp, capture_output=True, timeout=300,
                   env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    sys.path.insert(0, str(tmp))
    try:
        yield importlib.import_module("perfledger_client")
    finally:
        sys.path.remove(str(tmp))
        for name in [m for m in sys.modules if m.split(".")[0] == "perfledger_client"]:
            del sys.modules[name]


@pytest.fixture
def client(client_package, full_client):
    return client_package.Client(base_url="http://testserver").set_httpx_client(full_client)


def test_a_list_call_returns_typed_rows(client, full_client):
    from perfledger_client.api.results import list_results
    from perfledger_client.models import ListPageMlperfResultPublic, ListResultsScenarioType0Item

    page = list_results.sync(client=client, model=["deepseek-r1"],
                             scenario=[ListResultsScenarioType0Item.INTERACTIVE],
                             system="GB200 NVL72", limit=50)
    assert isinstance(page, ListPageMlperfResultPublic)
    raw = full_client.get("/v1/results", params={"model": "deepseek-r1", "scenario": "Interactive",
                                                 "system": "GB200 NVL72", "limit": 50}).json()
    assert page.total == raw["total"] == len(page.rows) > 0
    assert [r.id for r in page.rows] == [r["id"] for r in raw["rows"]]
    row = next(r for r in page.rows if r.id == GB200_ID)
    assert row.result == GB200_RESULT and row.units == "Tokens/s"
    assert row.evidence == "measured"


def test_an_item_call_returns_the_typed_item(client):
    from perfledger_client.api.results import get_result
    from perfledger_client.models import ResultItem

    item = get_result.sync(GB200_ID, client=client)
    assert isinstance(item, ResultItem)
    assert item.row.result == GB200_RESULT and item.row.total_accelerators == 72
    assert item.links.additional_properties["source"].startswith("/v1/sources/")


def test_errors_are_typed_with_the_error_envelope(client):
    from perfledger_client.api.results import get_result, list_results
    from perfledger_client.models import ErrorEnvelope
    from perfledger_client.models.error_detail_code import ErrorDetailCode

    missing = get_result.sync_detailed("no-such-result", client=client)
    assert missing.status_code == 404 and isinstance(missing.parsed, ErrorEnvelope)
    assert missing.parsed.error.code is ErrorDetailCode.NOT_FOUND
    assert "no result 'no-such-result'" in missing.parsed.error.message
    too_many = list_results.sync_detailed(client=client, limit=5000)
    assert too_many.status_code == 422 and isinstance(too_many.parsed, ErrorEnvelope)
    assert too_many.parsed.error.param == "limit" and too_many.parsed.error.status == 422
    assert "at most 1000" in too_many.parsed.error.message
