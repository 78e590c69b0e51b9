"""RFC 9110 methods and strict dates: OPTIONS says what a resource allows, a 405 names it in
``Allow``; ``as_of`` takes the ISO 8601 extended forms only, each with one meaning."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from api.routes.common import parse_as_of
from tests.conftest import make_settings, write_sources
from warehouse.exceptions import QueryError


@pytest.fixture
def client(data_dir, client_for, tmp_path):
    return client_for(make_settings(tmp_path, write_sources(tmp_path / "s.toml")))


@pytest.mark.parametrize("path", ["/v1/results", "/healthz", "/", "/static/app.js", "/docs"])
def test_options_answers_allow(client, path):
    r = client.options(path)
    assert r.status_code == 204 and r.content == b""
    assert r.headers["allow"] == "GET, HEAD, OPTIONS"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_a_405_names_the_allowed_methods(client, method):
    r = client.request(method, "/v1/results")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD, OPTIONS"
    assert r.json()["error"]["code"] == "method_not_allowed"


END_OF_DAY = datetime(2026, 12, 4, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.parametrize(("text", "moment"), [
    ("2026-12-04", END_OF_DAY),
    ("2026-12-04T10:00", datetime(2026, 12, 4, 10, tzinfo=UTC)),
    ("2026-12-04 10:00:30", datetime(2026, 12, 4, 10, 0, 30, tzinfo=UTC)),
    ("2026-12-04T10:00:00Z", datetime(2026, 12, 4, 10, tzinfo=UTC)),
    ("2026-12-04T10:00:00.5+05:30", datetime(2026, 12, 4, 4, 30, 0, 500000, tzinfo=UTC)),
])
def test_as_of_forms_each_have_one_meaning(text, moment):
    assert parse_as_of(text) == moment


@pytest.mark.parametrize("text", ["+05:30:00:00", "2026-12-04T10:00+05:30:00:00", "20261204",
                                  "20261204T101010Z", "2026-W49-5", "2026-338", "2026-12-04T10",
                                  "2026-12-04+05:30", "2026-12-04T10:00:00.1234567", "now",
                                  "1733300000", "2026-12-04T10:00:00+0530"])
def test_other_forms_are_refused_naming_the_accepted_ones(client, text):
    with pytest.raises(QueryError, match="YYYY-MM-DD"):
        parse_as_of(text)
    r = client.get("/v1/results", params={"as_of": text})
    assert r.status_code == 422 and r.json()["error"]["param"] == "as_of"
    assert "is not an ISO 8601 date" in r.json()["error"]["message"]
