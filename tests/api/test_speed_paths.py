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


DIRECT_EXTRA = [
    "/v1/results?model=deepseek-r1,llama2-70b&scenario=interactive&scenario=Server",
    "/v1/results?model=&limit=3",                      # an empty value is no filter
    "/v1/results?limit=3&limit=4",                     # the last value counts
    "/v1/results?limit=5000",                          # 422 from page()
    "/v1/results?limt=5",                              # unknown parameter: 422
    "/v1/results?min_result=abc",                      # invalid: FastAPI's 422
    "/v1/results?accelerator=H100",                    # ambiguous: 422 from the query
    "/v1/results?sort=-nosuch",
    "/v1/costs?rate=0",
    "/v1/costs?rate=5,x",
    "/v1/results/nosuch-id",                           # a path parameter: the regular way
    "/v1/calc/ridge?hardware=nvidia-h100-sxm",
    "/v1/calc/decode-bound",
    "/healthz", "/readyz", "/v1/refreshes", "/", "/nosuch",
]


def _direct_routes(client):
    """The DirectRoutes layer of a client's application (its middleware stack built)."""
    from api.direct import DirectRoutes

    client.get("/readyz")
    layer = client.app.middleware_stack
    while not isinstance(layer, DirectRoutes):
        layer = layer.app
    return layer


@pytest.mark.parametrize("headers", HEADERS, ids=["gzip", "identity", "accept-csv"])
def test_direct_routes_answer_what_fastapi_answers(full_copy, client_for, monkeypatch, headers):
    """The cold path's shortcut past dependency solving (api.direct) gives the status,
    headers and bytes FastAPI's own handling gives, for good requests and bad ones."""
    import api.direct

    tmp, sources = full_copy
    direct = client_for(make_settings(tmp, sources, api_response_cache=0))
    assert {"/v1/results", "/v1/costs", "/v1/ratios"} <= set(_direct_routes(direct).plans)
    monkeypatch.setattr(api.direct, "_plan", lambda dependant: None)
    regular = client_for(make_settings(tmp, sources, api_response_cache=0))
    assert _direct_routes(regular).plans == {}
    for url in QUERIES + DIRECT_EXTRA:
        a, b = direct.get(url, headers=headers), regular.get(url, headers=headers)
        if url in ("/healthz", "/readyz", "/v1/refreshes"):  # they name the time they answer
            assert a.status_code == b.status_code and a.json().keys() == b.json().keys()
            continue
        _same(a, b)
        assert direct.head(url, headers=headers).headers.get("etag") == b.headers.get("etag")
    if "Accept" not in headers:  # JSON pages from memory among them (CSV runs SQL)
        assert _direct_routes(direct).answered_in_loop > 0


def test_a_page_needing_the_database_is_answered_in_a_thread(full_copy, client_for):
    """On the event loop a list page is answered only from memory: the first request of a
    snapshot (nothing copied yet) and a page whose rows were never encoded go to a thread —
    with the same answer — and the next identical request stays on the loop."""
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache=0))
    layer = _direct_routes(client)
    url = "/v1/costs?basis=assumed&rate=10&model=llama2-70b-99.9&scenario=Interactive"
    first = client.get(url)
    assert layer.answered_in_loop == 0  # the copies and rows were made in a thread
    second = client.get(url)
    assert layer.answered_in_loop == 1
    _same(first, second)
    client.get(url + "&offset=5")  # rows already encoded: from memory
    assert layer.answered_in_loop == 2
    client.get("/v1/costs?basis=assumed&rate=11")  # new cost rows: computed in a thread
    assert layer.answered_in_loop == 2
    client.get("/v1/prices/history?sku=Standard_ND96isr_H100_v5&region=eastus2")  # SQL
    assert layer.answered_in_loop == 2
    # an accelerator name is resolved against the aliases read once per copy: the first such
    # page reads them in a thread, the same page again stays on the loop
    by_name = "/v1/results?accelerator="
    assert client.get(by_name + "H200").json()["total"] > 0
    assert layer.answered_in_loop == 2
    client.get(by_name + "H200")
    assert layer.answered_in_loop == 3
    assert client.get(by_name + "H100").status_code == 422  # ambiguous: FastAPI's path answers


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


COST_QUERIES = [
    "basis=assumed&rate=10&model=llama2-70b-99.9&scenario=Interactive",
    "basis=assumed&rate=5,7.5&division=all&availability=all&sort=-cost_per_million_tokens",
    "basis=list_price&accelerator=H200&division=all&availability=all",
    "round=6.1&price_status=priced&division=all&availability=all&limit=7&offset=1",
    "basis=list_price&offer=reservation&region=EastUS2&sort=cost_per_million_tokens",
    "basis=list_price&as_of=2026-01-01&organization=nvidia",
]


def _direct(snapshot, url: str) -> tuple[int, list[tuple]]:
    """The same costs page computed by the subquery itself on a plain connection to the
    snapshot (no kept rows, no hot views, no row store)."""
    import dataclasses

    import duckdb

    from api.routes.common import parse_as_of, ranked_filters
    from warehouse.queries import costs_query, run_list

    params: dict[str, list[str]] = {}
    for part in url.split("&"):
        k, v = part.split("=")
        params.setdefault(k, []).extend(v.split(","))
    one = {k: v[0] for k, v in params.items()}
    f = ranked_filters(params.get("round"), params.get("division"), params.get("organization"),
                       params.get("model"), params.get("accelerator"),
                       params.get("availability"), params.get("scenario"))
    query = costs_query(f, bases=params.get("basis", ["list_price", "assumed"]),
                        rates=[float(r) for r in params.get("rate", ["5", "10", "15"])],
                        region=one.get("region", "eastus2"), offer=one.get("offer", "on_demand"),
                        os=one.get("os", "linux"), as_of=parse_as_of(one.get("as_of")),
                        price_status=params.get("price_status", []))
    query = dataclasses.replace(query, limit=int(one.get("limit", 100)),
                                offset=int(one.get("offset", 0)),
                                sort=params.get("sort", []))
    con = duckdb.connect(str(snapshot), read_only=True, config={"threads": 1})  # as the API's
    try:
        total, rows, _ = run_list(con, query)
    finally:
        con.close()
    return total, [(r["id"], r["price_status"], r["rate_per_accelerator_hour"],
                    r["cost_per_million_tokens"]) for r in rows]


def _snapshot_file(tmp):
    import json

    return tmp / "var" / "snapshots" / json.loads((tmp / "var" / "CURRENT").read_text())["file"]


def _served(client, url: str) -> tuple[int, list[tuple]]:
    body = client.get("/v1/costs?" + url).json()
    return body["total"], [(r["id"], r["price_status"], r["rate_per_accelerator_hour"],
                            r["cost_per_million_tokens"]) for r in body["rows"]]


def test_kept_cost_rows_answer_what_the_costs_query_computes(full_copy, client_for):
    """/v1/costs reads the cost rows of its price parameters kept once per snapshot, the
    filters applied to them: the pages equal the costs SQL run whole on the snapshot."""
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache=0))
    snapshot = _snapshot_file(tmp)
    for url in COST_QUERIES:
        served = _served(client, url)
        assert served == _direct(snapshot, url), url
        assert served[1], url  # every query here has rows
    assert len(client.app.state.reader.get()._kept) == len(COST_QUERIES)  # one per price set


def test_kept_cost_rows_are_bounded_oldest_out(full_copy, client_for, monkeypatch):
    """With room for one set of cost rows, each new set of price parameters replaces the
    previous one (and its encoded rows); answers stay right when a set comes back."""
    import api.snapshot

    monkeypatch.setattr(api.snapshot, "KEPT_ROWS", 1)
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache=0))
    snapshot = _snapshot_file(tmp)
    for url in COST_QUERIES[:2] + COST_QUERIES[:1]:
        assert _served(client, url) == _direct(snapshot, url), url
        opened = client.app.state.reader.get()
        assert len(opened._kept) == 1
        (name, _), = opened._kept.values()
        assert {k[1] for k in opened.cache if k[0] == "rows"} <= {name}


def _random_query(rng, relation: str, public, table, con):
    """A list query over ``relation`` with random filters drawn from its own values (and some
    values it lacks), random sort keys (NULL-holding columns included) and a random page."""
    import pyarrow as pa

    from warehouse.queries import Accelerators, AnyOf, ListQuery

    q = ListQuery(relation=relation, public=public)
    own = [c for c in q.output_columns if c in table.schema.names]
    text = [c for c in own if pa.types.is_string(table.schema.field(c).type)]
    numbers = [c for c in own if pa.types.is_floating(table.schema.field(c).type)
               or pa.types.is_integer(table.schema.field(c).type)]

    def some(col, n):
        values = [v for v in table.column(col).to_pylist() if v is not None]
        picked = rng.sample(values, min(n, len(values))) if values else []
        return picked + (["no-such-value"] if rng.random() < 0.2 else [])

    for col in rng.sample(text, rng.randint(0, 2)):
        values = some(col, rng.randint(1, 2))
        if rng.random() < 0.3:
            q.casefold = (*q.casefold, col)
            values = [v.upper() for v in values]
        q.equals[col] = values
    flags = [c for c in own if pa.types.is_boolean(table.schema.field(c).type)]
    if rng.random() < 0.4 and flags:  # as ratios' flagged=false
        q.equals[rng.choice(flags)] = rng.choice([[False], [True], [True, False]])
    if rng.random() < 0.3 and text:
        col = rng.choice(text)
        sample = (some(col, 1) or ["abc"])[0]
        start = rng.randint(0, max(0, len(sample) - 3))
        q.contains[col] = sample[start:start + 3].swapcase()
    if rng.random() < 0.4 and numbers:
        col = rng.choice(numbers)
        bounds = sorted([v for v in some(col, 2) if not isinstance(v, str)] or [0])
        q.ranges[col] = (bounds[0] if rng.random() < 0.7 else None,
                         bounds[-1] if rng.random() < 0.7 else None)
    if rng.random() < 0.5 and {"model_id", "model_family"} <= set(own):
        models = some("model_family", 1) + some("model_id", 1)[:1]
        q.any_of.append(AnyOf((("model_id", False, models), ("model_family", False, models))))
    if rng.random() < 0.3 and "accelerator_id" in own:  # ids, short names, ambiguous ones
        names = [v.upper() for v in some("accelerator_id", 1)] + \
            [rng.choice(["H200", "B200", "MI355X", "H100", "nvidia-gb200", "no-such-gpu"])]
        q.any_of.append(AnyOf((("accelerator_id", False, Accelerators(tuple(names))),)))
    if rng.random() < 0.3 and "organization" in own:
        q.any_of.append(AnyOf((("organization", True,
                                 [o.lower() for o in some("organization", 2)]),)))
    q.sort = [("-" if rng.random() < 0.5 else "") + c for c in rng.sample(own, rng.randint(0, 2))]
    q.limit = rng.randint(1, 60)
    q.offset = rng.choice([0, 0, rng.randint(0, 80)])
    return q


def test_in_memory_filters_give_the_rows_sql_gives(full_copy, client_for):
    """``arrow_ids`` (filters and sorts on the in-memory copies: results, the hot views, kept
    cost rows) returns the same total and the same ids in the same order as the SQL page
    query, for 600 random queries with NULL-holding sort columns, case folding, substrings,
    ranges, accelerator names (ambiguous ones too: the same error), values the data lacks and
    pages past the end; every other query reuses what the previous ones kept (encodings, value
    lookups, ranks, aliases), as the API does."""
    import random

    from warehouse.exceptions import QueryError
    from warehouse.public import CostPublic, MlperfResultPublic, ScenarioRatioPublic
    from warehouse.queries import arrow_ids, run_list_ids

    def outcome(run, *args, **kwargs):
        try:
            return run(*args, **kwargs)
        except QueryError as e:
            return ("error", e.param, str(e))

    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache=0))
    assert client.get("/v1/costs?basis=list_price,assumed").status_code == 200  # rows kept
    opened = client.app.state.reader.get()
    con = opened.local_cursor()
    (kept, kept_rows), = opened._kept.values()
    con.register(kept, kept_rows)  # kept on the thread that asked; this one reads them too
    rng = random.Random(20261203)
    nonempty = errors = 0
    for relation, public in (("mlperf_result", MlperfResultPublic),
                             ("scenario_ratio", ScenarioRatioPublic), (kept, CostPublic)):
        table = opened.table(relation, [c for c in public.model_fields])
        assert table is not None and table.num_rows > 50
        memo: dict = {}
        for n in range(200):
            q = _random_query(rng, relation, public, table, con)
            found = outcome(arrow_ids, con, table, q, memo=memo if n % 2 else None)
            assert found is not None, q
            assert found == outcome(run_list_ids, con, q), q
            nonempty += found[0] != "error" and bool(found[1])
            errors += found[0] == "error"
    assert nonempty > 250  # most pages hold rows: the comparison is not of empty lists
    assert 0 < errors < 100  # an ambiguous accelerator name is the same error both ways
