"""The fast paths answer exactly what the slow ones do: a request replayed by the warm path
(``FastResponses``), a page built from the per-snapshot row store and a page computed by the
whole query give the same status, headers and bytes."""

from __future__ import annotations

import pytest

from tests.conftest import make_settings

QUERIES = [
    "/v1/results?model=deepseek-r1&scenario=Interactive",
    "/v1/results?limit=500",
    "/v1/results?sort=-result&limit=7&offset=3",
    "/v1/results?model=llama2-70b&format=csv",
    "/v1/results?model=llama2-70b&columns=id,result",
    "/v1/results?model=nosuch",
    "/v1/ratios?model=llama3.1-8b",
    "/v1/costs?basis=assumed&rate=10&model=llama2-70b-99.9&scenario=Interactive",
    "/v1/costs?basis=list_price&accelerator=H200&division=all&availability=all",
    "/v1/latency-bounds?model=deepseek-r1&answer_tokens=500",
    "/v1/prices/history?sku=Standard_ND96isr_H100_v5&region=eastus2",
    "/v1/claims",
    "/v1/energy?format=ndjson",
    "/v1/per-accelerator?model=llama2-70b&format=parquet",
    "/v1/calc/grid",
    "/v1/meta",
]
HEADERS = [{}, {"Accept-Encoding": "identity"}, {"Accept": "text/csv"}]


def _same(a, b) -> None:
    assert a.status_code == b.status_code
    assert a.content == b.content
    drop = {"date"}
    assert {k: v for k, v in a.headers.items() if k not in drop} == \
        {k: v for k, v in b.headers.items() if k not in drop}


@pytest.fixture
def cold_and_warm(full_copy, client_for):
    tmp, sources = full_copy
    warm = client_for(make_settings(tmp, sources))
    cold = client_for(make_settings(tmp, sources, api_response_cache=0))
    return cold, warm


@pytest.mark.parametrize("headers", HEADERS, ids=["gzip", "identity", "accept-csv"])
def test_cold_and_warm_answers_are_byte_identical(cold_and_warm, headers):
    cold, warm = cold_and_warm
    fast = warm.app.state.fast
    for url in QUERIES:
        computed = cold.get(url, headers=headers)
        first = warm.get(url, headers=headers)  # computed, then recorded
        replayed = warm.get(url, headers=headers)
        _same(computed, first)
        _same(computed, replayed)
        if computed.status_code == 200 and "csv" not in url:
            assert any(k[1] == url.split("?")[0] for k in fast._items), f"{url} not recorded"
        head = warm.head(url, headers=headers)
        assert head.status_code == computed.status_code and head.content == b""
        etag = computed.headers.get("etag")
        if etag:  # a revalidation, strong or weak, is a 304 on both paths
            for tag in (etag, "W/" + etag):
                c = cold.get(url, headers={**headers, "If-None-Match": tag})
                w1 = warm.get(url, headers={**headers, "If-None-Match": tag})
                w2 = warm.get(url, headers={**headers, "If-None-Match": tag})
                assert c.status_code == 304
                _same(c, w1)
                _same(c, w2)


def test_the_row_store_page_equals_the_whole_query(full_client):
    """A JSON page from the row store (ids, then each row's stored JSON) and the same page
    computed whole (naming every column sends it through the query) hold the same rows."""
    for url in QUERIES[:3] + ["/v1/ratios?model=llama3.1-8b", "/v1/claims",
                              "/v1/prices/history?sku=Standard_ND96isr_H100_v5&region=eastus2"]:
        stored = full_client.get(url)
        rows = stored.json()["rows"]
        assert rows
        whole = full_client.get(url + ("&" if "?" in url else "?") + "columns="
                                + ",".join(rows[0]))
        assert [r["id"] for r in whole.json()["rows"]] == [r["id"] for r in rows]
        assert whole.content.split(b'"rows":', 1)[1] == stored.content.split(b'"rows":', 1)[1]


def test_the_caches_hold_at_most_their_memory_budget(full_copy, client_for):
    """PERFLEDGER_API_RESPONSE_CACHE_MB bounds what both caches hold, oldest out first; an
    answer larger than the budget is served, never kept."""
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache_mb=1))
    fast, memo = client.app.state.fast, client.app.state.responses
    budget = 2**20 // 2
    big = client.get("/v1/results?limit=1000", headers={"Accept-Encoding": "identity"})
    assert big.status_code == 200 and len(big.content) > budget
    assert fast.bytes == 0 and memo.bytes == 0
    sizes = []
    for offset in range(0, 500, 100):  # five pages of ~190 KB: more than the budget
        r = client.get(f"/v1/results?limit=100&offset={offset}",
                       headers={"Accept-Encoding": "identity"})
        assert r.status_code == 200
        sizes.append(len(r.content))
        assert fast.bytes <= budget and memo.bytes <= budget
    assert sum(sizes) > budget
    assert fast.bytes == sum(len(body) for _, body in fast._items.values()) > 0
    kept = [key[2] for key in fast._items]
    assert b"limit=100&offset=0" not in kept and b"limit=100&offset=400" in kept  # oldest out
    again = client.get("/v1/results?limit=100&offset=400", headers={"Accept-Encoding": "identity"})
    assert again.content == client_for(make_settings(tmp, sources, api_response_cache=0)).get(
        "/v1/results?limit=100&offset=400", headers={"Accept-Encoding": "identity"}).content
