"""warehouse.queries on a small warehouse built in memory: only a Public model's columns come
back, identifiers are checked, values are bound, pages and totals are right, and the query
builders add the conditions their routes rely on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from warehouse import queries as q
from warehouse.exceptions import QueryError
from warehouse.model.public import ClaimPublic, MlperfResultPublic
from warehouse.model.schema import empty_warehouse
from warehouse.storage.db import insert_rows

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def result(i: int, **over) -> dict:
    row = {"id": f"r{i:02d}", "round": "v6.1", "organization": f"Org{i % 3}",
           "availability": "available", "division": "closed", "system_name": f"System_{i}",
           "platform": f"p{i}", "model": "llama3_1-8b", "model_id": "llama3.1-8b",
           "model_family": "llama3.1-8b", "scenario": "Offline", "scenario_raw": "offline",
           "result": float(100 + i), "units": "Tokens/s", "is_power": False,
           "accelerator_mix": "single", "accelerator_model_name": "NVIDIA H100",
           "accelerator_id": "nvidia-h100-sxm", "total_accelerators": 8, "version": "v6.1",
           "row_number": i + 2, "evidence": "measured", "source_snapshot_id": "snap"}
    return {**row, **over}


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = empty_warehouse()
    insert_rows(con, "source_snapshot", [{
        "id": "snap", "source": "mlperf", "kind": "mlperf_summary", "label": "v6.1",
        "url": "https://example.org/summary.csv", "fetched_at": T0, "sha256": "ab" * 32,
        "byte_size": 10, "parser_version": "p/1", "raw_path": "raw/ab/abab"}])
    insert_rows(con, "mlperf_result", [result(i) for i in range(12)]
                + [result(50, id="pct", system_name="100% sure_thing")])
    insert_rows(con, "claim", [{
        "id": "c1", "vendor": "V", "model": "llama3.1-8b", "metric": "m", "value": 1.0,
        "unit": "u", "evidence": "vendor_claim", "claimed_on": T0.date(),
        "checked_on": T0.date(), "source_title": "t", "source_url": "https://cite.example/c1",
        "file": "claims.yaml", "source_snapshot_id": "snap"}])
    return con


def test_rows_have_exactly_the_public_columns_with_the_source_joined(con):
    query = q.ListQuery(relation="mlperf_result", public=MlperfResultPublic, limit=1)
    total, [row], cols = q.run_list(con, query)
    assert cols == query.output_columns and list(row) == cols
    assert set(cols) == set(MlperfResultPublic.model_fields)
    assert cols[-4:] == ["source_name", "source_snapshot_url", "source_fetched_at",
                         "source_sha256"]
    assert row["source_snapshot_url"] == "https://example.org/summary.csv"
    assert total == 13


def test_a_column_the_model_does_not_list_never_comes_back(con):
    """``extras`` is a table column the Public model lists; a column added to the table later
    is not returned until the model lists it."""
    con.execute("ALTER TABLE mlperf_result ADD COLUMN secret_new VARCHAR DEFAULT 'x'")
    _, rows, cols = q.run_list(con, q.ListQuery(relation="mlperf_result",
                                                public=MlperfResultPublic))
    assert "secret_new" not in cols and all("secret_new" not in r for r in rows)


def test_claim_keeps_its_citation_and_gains_the_file_url(con):
    _, [row], cols = q.run_list(con, q.claims_query(vendor=[], evidence=[], metric=[],
                                                    model=["LLAMA3_1-8b"], product=None))
    assert row["source_url"] == "https://cite.example/c1"
    assert row["source_snapshot_url"] == "https://example.org/summary.csv"
    assert len(cols) == len(set(cols)) == len(ClaimPublic.model_fields)


def test_pages_and_totals(con):
    query = q.ListQuery(relation="mlperf_result", public=MlperfResultPublic, limit=5, offset=10,
                        sort=["-result"])
    total, rows, _ = q.run_list(con, query)
    assert total == 13 and [r["id"] for r in rows] == ["r02", "r01", "r00"]  # a short page
    query.offset = 0
    total, rows, _ = q.run_list(con, query)  # a full page: the total is counted
    assert total == 13 and [r["result"] for r in rows] == [150.0, 111.0, 110.0, 109.0, 108.0]
    query.offset = 100
    total, rows, _ = q.run_list(con, query)
    assert total == 13 and rows == []


@pytest.mark.parametrize("limit, offset, sort, org", [
    (5, 0, ["-result"], None), (5, 10, ["-result"], None), (5, 100, [], None),
    (100, 0, ["system_name"], None), (3, 1, [], "Org1"), (5, 0, [], "nosuch")])
def test_a_page_counts_every_match(con, limit, offset, sort, org):
    """The total is every matching row, for full, short, past the end and empty pages, and a
    page holds the rows the plain SQL gives in that order."""
    query = q.ListQuery(relation="mlperf_result", public=MlperfResultPublic, limit=limit,
                        offset=offset, sort=sort)
    if org:
        query.equals["organization"] = [org]
    expected_total = con.execute("SELECT count(*) FROM mlperf_result"
                                 + (" WHERE organization = ?" if org else ""),
                                 [org] if org else []).fetchone()[0]
    total, rows, _ = q.run_list(con, query)
    assert total == expected_total
    assert len(rows) == max(0, min(limit, expected_total - offset))
    order = {"-result": "result DESC NULLS LAST, ", "system_name": "system_name ASC NULLS LAST, "}
    expected = [r[0] for r in con.execute(
        "SELECT id FROM mlperf_result" + (" WHERE organization = ?" if org else "")
        + " ORDER BY " + "".join(order[k] for k in sort) + "id LIMIT ? OFFSET ?",
        ([org] if org else []) + [limit, offset]).fetchall()]
    assert [r["id"] for r in rows] == expected


@pytest.mark.parametrize("change, param", [
    ({"sort": ["nope"]}, "sort"), ({"sort": ["-id; DROP TABLE claim"]}, "sort"),
    ({"columns": ["id", "nope"]}, "columns"), ({"equals": {"nope": ["x"]}}, "nope"),
    ({"contains": {"nope": "x"}}, "nope"), ({"ranges": {"nope": (1, 2)}}, "nope")])
def test_unknown_identifiers_are_query_errors(con, change, param):
    query = q.ListQuery(relation="mlperf_result", public=MlperfResultPublic, **change)
    with pytest.raises(QueryError) as e:
        q.run_list(con, query)
    assert e.value.param == param
    assert con.execute("SELECT count(*) FROM claim").fetchone() == (1,)


def test_values_are_bound_and_like_wildcards_are_literal(con):
    sneaky = q.ListQuery(relation="mlperf_result", public=MlperfResultPublic,
                         equals={"organization": ["Org1' OR '1'='1"]})
    assert q.run_list(con, sneaky)[0] == 0
    literal = q.results_query(q.ResultFilter(system="100%"), units=[], min_result=None,
                              max_result=None)
    assert [r["id"] for r in q.run_list(con, literal)[1]] == ["pct"]
    underscore = q.results_query(q.ResultFilter(system="y_1"), units=[], min_result=None,
                                 max_result=None)
    assert q.run_list(con, underscore)[0] == 0  # '_' is not a wildcard


def test_results_query_matches_accelerator_id_or_published_name_and_ranges(con):
    f = q.ResultFilter(accelerator=["NVIDIA H100"], model=["Llama3_1-8B"])
    by_name = q.run_list(con, q.results_query(f, units=[], min_result=105,
                                              max_result=108))[1]
    assert [r["id"] for r in by_name] == ["r05", "r06", "r07", "r08"]
    f.accelerator = ["nvidia-h100-sxm"]
    assert q.run_list(con, q.results_query(f, units=[], min_result=None,
                                           max_result=None))[0] == 13


def test_costs_query_prices_each_result_on_each_basis(con):
    query = q.costs_query(q.ResultFilter(), bases=["assumed"], rates=[10.0], region="eastus2",
                          offer="on_demand", os="linux", as_of=None, price_status=[])
    _, rows, _ = q.run_list(con, query)
    assert len(rows) == 13
    for r in rows:
        expected = 10.0 * 8 / (r["result"] * 3600) * 1e6  # rate x accelerators / tokens per hour
        assert r["cost_per_million_tokens"] == pytest.approx(expected)
        assert r["basis"] == "derived: measured + assumption" and r["price_status"] == "assumed"
    listed = q.costs_query(q.ResultFilter(), bases=["list_price"], rates=[], region="eastus2",
                           offer="on_demand", os="linux", as_of=T0 + timedelta(days=1),
                           price_status=["no price"])
    _, rows, _ = q.run_list(con, listed)
    assert len(rows) == 13 and all(r["cost_per_million_tokens"] is None for r in rows)
    with pytest.raises(QueryError):
        q.costs_query(q.ResultFilter(), bases=[], rates=[], region="", offer="", os="",
                      as_of=None, price_status=[])


def test_item_reads(con):
    detail = q.result_detail(con, "r03")
    assert detail["row"]["id"] == "r03" and "links" not in detail
    assert detail["source"]["rows"]["mlperf_result"] == 13 and detail["source"]["rows"]["claim"] == 1
    assert q.result_detail(con, "nope") is None
    claim = q.claim_detail(con, "c1")
    assert claim["row"]["id"] == "c1" and claim["history"] == [] and not claim["withdrawn"]
    assert q.claim_detail(con, "never") is None
    meta = q.meta(con)
    assert meta["organizations"] == ["Org0", "Org1", "Org2"] and meta["regions"] == []
    assert {e["label"] for e in meta["evidence"]} >= {"measured", "derived"}
