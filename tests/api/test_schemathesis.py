"""Property-based API testing from the OpenAPI schema (Schemathesis): for every endpoint, no
5xx, every response status is one the schema documents, and errors use the one error shape.

Schemathesis's pytest plugin does not load under this pytest, so the operations are driven
with Hypothesis directly from Schemathesis's strategies.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from api.app import create_app
from tests.conftest import make_settings


@pytest.fixture(scope="module")
def api_schema(full_warehouse):
    app = create_app(make_settings(full_warehouse, full_warehouse / "sources.toml"))
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def test_every_operation_conforms(api_schema):
    operations = [r.ok() for r in api_schema.get_all_operations()]
    assert len(operations) >= 25
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=15, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case):
            response = case.call()
            assert response.status_code < 500, (case.path, case.query, response.text[:300])
            if response.status_code >= 400 and response.status_code != 405:
                error = response.json()["error"]
                assert error["status"] == response.status_code and error["message"]
            case.validate_response(response, checks=[schemathesis.checks.status_code_conformance])

        check()
