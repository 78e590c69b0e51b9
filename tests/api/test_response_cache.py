"""The response cache answers exactly what the application computes: a request replayed from
memory and the same request computed give the same status, headers and bytes; the cache holds
at most its memory budget; kept cost rows answer what the costs SQL computes."""

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
    cold = client_for(make_settings(tmp, sources, api_response_cache_mb=0))
    return cold, warm


@pytest.mark.parametrize("headers", HEADERS, ids=["gzip", "identity", "accept-csv"])
def test_cold_and_warm_answers_are_byte_identical(cold_and_warm, headers):
    cold, warm = cold_and_warm
    for url in QUERIES:
        computed = cold.get(url, headers=headers)
        first = warm.get(url, headers=headers)  # computed, then recorded
        replayed = warm.get(url, headers=headers)
        _same(computed, first)
        _same(computed, replayed)
        if computed.status_code == 200 and "csv" not in url:
            assert _recorded(warm, url, headers), f"{url} not recorded"
        head = warm.head(url, headers=headers)
        assert head.status_code == computed.status_code and head.content == b""
        etag = computed.headers.get("etag")
        if etag:  # a revalidation, strong or weak, is a 304 on both paths
            for tag in (etag, etag.removeprefix("W/")):
                c = cold.get(url, headers={**headers, "If-None-Match": tag})
                w1 = warm.get(url, headers={**headers, "If-None-Match": tag})
                w2 = warm.get(url, headers={**headers, "If-None-Match": tag})
                assert c.status_code == 304
                _same(c, w1)
                _same(c, w2)


def _cache(client):
    """The response cache in front of a client's application."""
    return client.app.response_cache


def _recorded(client, url: str, headers: dict[str, str] | None = None) -> bool:
    """Whether the answer to ``url`` with ``headers`` is recorded (as the test client sends
    it: gzip accepted unless the headers say otherwise)."""
    cache = _cache(client)
    sent = {"accept-encoding": "gzip, deflate", **{k.lower(): v for k, v in (headers or {}).items()}}
    path, _, query = url.partition("?")
    return cache.request_key(cache._snapshot, path, query.encode(),
                             [(k.encode(), v.encode()) for k, v in sent.items()]) in cache._items


def test_the_cache_holds_at_most_its_memory_budget(full_copy, client_for):
    """PERFLEDGER_API_RESPONSE_CACHE_MB bounds what the cache holds, least recently used out
    first; an answer larger than a quarter of it is served, never kept."""
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache_mb=1))
    cache = _cache(client)
    budget = 2**20
    big = client.get("/v1/results?limit=1000", headers={"Accept-Encoding": "identity"})
    assert big.status_code == 200 and len(big.content) > budget // 4
    assert cache.bytes == 0
    sizes = []
    for offset in range(0, 400, 40):  # ten pages of ~180 KB: more than the budget
        r = client.get(f"/v1/results?limit=100&offset={offset}",
                       headers={"Accept-Encoding": "identity"})
        assert r.status_code == 200
        sizes.append(len(r.content))
        assert cache.bytes <= budget
    assert sum(sizes) > budget
    assert cache.bytes == sum(size for _, _, size in cache._items.values()) > 0
    assert cache.bytes >= sum(len(body) for _, body, _ in cache._items.values())
    identity = {"Accept-Encoding": "identity"}
    assert not _recorded(client, "/v1/results?limit=100&offset=0", identity)  # oldest out
    assert _recorded(client, "/v1/results?limit=100&offset=360", identity)
    again = client.get("/v1/results?limit=100&offset=360", headers={"Accept-Encoding": "identity"})
    assert again.content == client_for(make_settings(tmp, sources, api_response_cache_mb=0)).get(
        "/v1/results?limit=100&offset=360", headers={"Accept-Encoding": "identity"}).content


def test_errors_and_the_run_journal_are_never_replayed(full_client):
    cache = _cache(full_client)
    for url in ("/v1/results?limt=5", "/v1/results/nosuch-id", "/healthz", "/v1/refreshes"):
        full_client.get(url)
        full_client.get(url)
        assert not _recorded(full_client, url), url
    assert not cache._items


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
    snapshot (no kept rows, no hot views)."""
    import dataclasses

    import duckdb

    from api.params import ResultParams
    from api.routes.common import parse_as_of
    from warehouse.queries import costs_query, run_list

    params: dict[str, list[str]] = {}
    for part in url.split("&"):
        k, v = part.split("=")
        params.setdefault(k, []).extend(v.split(","))
    one = {k: v[0] for k, v in params.items()}
    f = ResultParams(**{k: params.get(k) for k in ("round", "division", "organization", "model",
                                                    "accelerator", "availability", "scenario")}
                     ).filters()
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
    """/v1/costs runs the cost SQL of a set of price parameters as it is the first time it is
    asked, then reads its rows kept once per snapshot, the filters applied to them: both pages
    equal the costs SQL run whole on the snapshot."""
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache_mb=0))
    snapshot = _snapshot_file(tmp)
    for n, url in enumerate(COST_QUERIES):
        first = _served(client, url)
        assert len(client.app.state.reader.get()._kept) == n  # asked once: nothing kept
        again = _served(client, url)
        assert first == again == _direct(snapshot, url), url
        assert again[1], url  # every query here has rows
    assert len(client.app.state.reader.get()._kept) == len(COST_QUERIES)  # one per price set


def test_kept_cost_rows_are_bounded_oldest_out(full_copy, client_for, monkeypatch):
    """With room for one set of cost rows, each new set of price parameters replaces the
    previous one; answers stay right when a set comes back."""
    import api.snapshot

    monkeypatch.setattr(api.snapshot, "KEPT_ROWS", 1)
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache_mb=0))
    snapshot = _snapshot_file(tmp)
    for url in COST_QUERIES[:2] + COST_QUERIES[:1]:
        assert _served(client, url) == _served(client, url) == _direct(snapshot, url), url
        opened = client.app.state.reader.get()
        assert len(opened._kept) == 1



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


def test_a_relation_over_the_serving_limit_pages_with_the_whole_query(full_copy, client_for,
                                                                     monkeypatch):
    """Past SERVING_MAX_ROWS a relation gets no serving table; its JSON pages are the same
    rows and bytes the serving table gives below the limit."""
    import api.snapshot

    tmp, sources = full_copy
    url = "/v1/results?division=all&availability=all&limit=50&offset=20&sort=-result"
    served = client_for(make_settings(tmp, sources, api_response_cache_mb=0))
    first = served.get(url)
    assert any(v for v in served.app.state.reader.get()._serving.values())
    monkeypatch.setattr(api.snapshot, "SERVING_MAX_ROWS", 10)
    whole = client_for(make_settings(tmp, sources, api_response_cache_mb=0))
    second = whole.get(url)
    assert not any(v for v in whole.app.state.reader.get()._serving.values())
    assert first.status_code == second.status_code == 200
    assert first.content == second.content


def test_a_serving_table_written_beside_another_write_serves_its_rows(full_copy, client_for,
                                                                     monkeypatch):
    """Large serving tables are compressed by a checkpoint, which DuckDB refuses while another
    write transaction runs (requests build serving and kept tables side by side): the table is
    then served as written, with the same rows, and the next checkpoint compresses it."""
    import api.snapshot
    from warehouse.queries import ListQuery, relation_columns, run_list, run_list_json

    monkeypatch.setattr(api.snapshot, "COMPRESS_FROM_ROWS", 0)  # this small one too
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache_mb=0, api_warm=False))
    opened = client.app.state.reader.get()
    con = opened.local_cursor()
    other = opened.cursor()
    other.execute("BEGIN TRANSACTION")
    other.execute(f"CREATE TABLE {opened.served_db}.main.busy AS SELECT 1 AS x")  # still open
    try:
        from api.responses import encode_row
        from warehouse.model.public import ScenarioRatioPublic
        from warehouse.queries import serving_source

        q = ListQuery(relation="scenario_ratio", public=ScenarioRatioPublic)
        have = relation_columns(con, "scenario_ratio")
        base, params, cols, order = serving_source(con, q, have)
        served = opened.serving("scenario_ratio", cols, base, params, order,
                                lambda r: encode_row(r, cols))
        assert served is not None
    finally:
        other.execute("ROLLBACK")
        other.close()
    total, rows, names = run_list(con, q, have)
    assert run_list_json(con, q, *served) == (total, [encode_row(r, names).decode()
                                                      for r in rows])
    assert total > 0
    assert served[0] in {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ?",
        [api.snapshot.SERVED_DB]).fetchall()}  # written where checkpoints compress
    assert client.get("/v1/ratios").status_code == 200


@pytest.mark.parametrize("relation,public", [("mlperf_result", "MlperfResultPublic"),
                                             ("scenario_ratio", "ScenarioRatioPublic")])
def test_a_page_by_position_is_the_plain_page(full_copy, client_for, monkeypatch, relation,
                                                public):
    """A sorted page of a serving table of more than COUNTED_FROM_ROWS rows carries the count
    of the filtered rows on its rows: for random filters, sorts and pages (past the last row
    too) the rows and total of both ways are those of the relation itself sorted by ORDER BY
    and encoded row by row: a page in the serving table's own order (no sort asked) is a
    slice of every matching position, its total their number, and each position returned is
    that row's JSON."""
    import random

    import warehouse.model.public
    import warehouse.queries.listing
    from api.responses import encode_row
    from warehouse.exceptions import QueryError
    from warehouse.queries import (
        ListQuery,
        relation_columns,
        run_list,
        run_list_json,
        serving_source,
    )

    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache_mb=0))
    opened = client.app.state.reader.get()
    con = opened.local_cursor()
    model = getattr(warehouse.model.public, public)
    plain = ListQuery(relation=relation, public=model)
    have = relation_columns(con, relation)
    base, params, cols, order = serving_source(con, plain, have)
    served = opened.serving(relation, cols, base, params, order, lambda r: encode_row(r, cols))
    assert served is not None
    table, by_position = served
    arrow = con.sql(f"SELECT * EXCLUDE (pos) FROM {table}").to_arrow_table()  # noqa: S608
    rng = random.Random(20261204)
    pages = natural = 0
    for _ in range(150):
        q = _random_query(rng, relation, model, arrow, con)

        def run(counted_from: int, q=q):
            monkeypatch.setattr(warehouse.queries.listing, "COUNTED_FROM_ROWS", counted_from)
            try:
                return run_list_json(con, q, table, by_position)
            except QueryError as e:  # an ambiguous accelerator name: the same error both ways
                return str(e)

        by_page, by_count = run(len(by_position)), run(0)
        try:  # the relation itself, sorted by ORDER BY (a page in the table's order is not)
            total, found, names = run_list(con, q, have)
            reference: object = (total, [encode_row(r, names).decode() for r in found])
        except QueryError as e:
            reference = str(e)
        assert reference == by_page == by_count, (
            q.equals, q.any_of, q.sort, q.limit, q.offset)
        natural += not q.sort
        pages += isinstance(by_page, tuple) and bool(by_page[1])
    assert pages > 30  # most random queries have rows
    assert natural > 20  # pages in the serving table's own order (no sort asked) among them


def _held(cache) -> int:
    """The bytes the cache's keys and entries really hold (every bytes or str in them)."""
    total = 0
    for key, entry in cache._items.items():
        parts = key if isinstance(key, tuple) else (key,)
        total += sum(len(p) for p in parts if isinstance(p, bytes | str))
        total += len(entry[1]) + sum(len(k) + len(v) for k, v in entry[0]["headers"])
    return total


def test_header_values_are_not_kept_and_map_to_what_changes_the_answer(full_copy, client_for):
    """A hundred requests with different 64 KB Accept headers (none naming a format) and
    Origins (CORS off) are one answer, recorded once, holding none of those bytes."""
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache_mb=1))
    cache = _cache(client)
    for i in range(100):
        r = client.get("/v1/results?limit=5", headers={
            "Accept": f"application/json, */*;q=0.{i:02d}, " + "x" * 65536,
            "Origin": f"https://o{i}.example"})
        assert r.status_code == 200
    assert len(cache._items) == 1 and _held(cache) <= cache.bytes <= 2**20
    csv = client.get("/v1/results?limit=5", headers={"Accept": "text/csv, " + "y" * 1000})
    assert csv.headers["content-type"].startswith("text/csv") and len(cache._items) == 2


def test_every_byte_an_entry_holds_counts_against_the_budget(full_copy, client_for):
    """Two hundred different 8 KB query strings: each answer is recorded, and what the keys
    and entries hold together stays within PERFLEDGER_API_RESPONSE_CACHE_MB."""
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources, api_response_cache_mb=1))
    cache = _cache(client)
    for i in range(200):
        r = client.get(f"/v1/results?limit=1&system={i:04d}" + "z" * 8192)
        assert r.status_code == 200
        assert _held(cache) <= cache.bytes <= 2**20
    assert len(cache._items) > 10


@pytest.mark.parametrize("header, twice, plain, check", [
    ("accept", ["text/csv", "application/json"], {},
     lambda r: r.headers["content-type"].startswith("application/json")),
    ("accept-encoding", ["gzip", "identity"], {"accept-encoding": "identity"},
     lambda r: "content-encoding" not in r.headers),
    ("if-none-match", ["<etag>", '"other"'], {"if-none-match": '"other"'},
     lambda r: r.status_code == 200 and r.content)])
def test_a_header_sent_twice_never_sets_another_clients_answer(full_copy, client_for, header,
                                                              twice, plain, check):
    """The application reads a repeated header's first value and a key would take its last:
    such a request is answered but never recorded, so the next client's answer is its own."""
    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources))
    url = "/v1/results?limit=3"
    etag = client.get(url).headers["etag"]
    sent = [(header, value.replace("<etag>", etag)) for value in twice]
    assert client.get(url, headers=sent).status_code in (200, 304)
    assert check(client.get(url, headers=plain))


def test_two_accept_headers_asking_for_csv_share_one_tag_and_revalidate(full_client):
    """The cache replays one CSV answer to both Accept spellings, but the tag hashed the raw
    header: the second client's revalidation with the tag it was sent got a 200 and another
    tag. The tag follows the negotiated format, and is weak (the same representation goes
    out compressed or not)."""
    url = "/v1/results?limit=3"
    first = full_client.get(url, headers={"Accept": "text/csv"})
    second = full_client.get(url, headers={"Accept": "text/csv, */*;q=0.1"})
    assert first.headers["etag"] == second.headers["etag"]
    assert first.headers["etag"].startswith('W/"')
    again = full_client.get(url, headers={"Accept": "text/csv, */*;q=0.1",
                                          "If-None-Match": second.headers["etag"]})
    assert again.status_code == 304
    json_tag = full_client.get(url).headers["etag"]
    assert json_tag != first.headers["etag"]
