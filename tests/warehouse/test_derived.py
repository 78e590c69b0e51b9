"""warehouse.figures.derived on hand-made rows: the ratio pairs like with like, per-accelerator and
assumed-rate figures follow their formulas, every column is commented, and each view's basis
is what ``vocabulary.basis`` makes of its inputs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from warehouse.model.schema import empty_warehouse
from warehouse.model.vocabulary import ASSUMED_RATES, basis
from warehouse.storage.db import insert_rows


def row(id: str, scenario: str, result: float, units: str = "Tokens/s", **over) -> dict:
    base = {"id": id, "round": "v6.1", "organization": "O", "availability": "available",
            "division": "closed", "system_name": "S", "platform": "P", "model": "m",
            "model_id": "m", "model_family": "m", "scenario": scenario, "scenario_raw": scenario,
            "result": result, "units": units, "is_power": False, "accelerator_mix": "single",
            "total_accelerators": 4, "version": "v6.1", "row_number": 2,
            "evidence": "measured", "source_snapshot_id": "s"}
    return {**base, **over}


@pytest.fixture
def con():
    con = empty_warehouse()
    insert_rows(con, "mlperf_result", [
        row("off", "Offline", 1000.0), row("srv", "Server", 600.0),
        row("int", "Interactive", 250.0),
        row("watts", "Offline", 5000.0, units="Watts", is_power=True),
        row("q", "Server", 40.0, units="Queries/s", model_id="n", model_family="n"),
        row("smp", "Offline", 50.0, units="Samples/s", model_id="n", model_family="n"),
        row("cpu", "Offline", 10.0, total_accelerators=0, platform="cpu", accelerator_mix="none"),
    ])
    return con


def test_ratios_pair_like_with_like_and_flag_samples_vs_queries(con):
    got = {(r[0], r[1]): r[2:] for r in con.execute(
        "SELECT offline_result_id, other_result_id, ratio, interactive_premium, unit_pairing, "
        "flagged, basis FROM scenario_ratio").fetchall()}
    assert set(got) == {("off", "srv"), ("off", "int"), ("smp", "q")}  # power rows never pair
    # the interactive premium is the Interactive row's (Server's ratio says the same, #48)
    assert got[("off", "srv")][0] == pytest.approx(0.6) and got[("off", "srv")][1] is None
    assert got[("off", "int")][:2] == pytest.approx((0.25, 4.0))
    assert got[("smp", "q")][2:4] == ("samples_vs_queries", True)
    assert {g[4] for g in got.values()} == {basis("measured")}


def test_per_accelerator_and_assumed_rate_costs(con):
    per = dict(con.execute("SELECT id, per_accelerator FROM result_per_accelerator").fetchall())
    assert per == {"off": 250.0, "srv": 150.0, "int": 62.5, "q": 10.0, "smp": 12.5}
    costs = con.execute("SELECT result_id, rate_per_accelerator_hour, cost_per_million_tokens, "
                        "basis FROM cost_assumed_rate WHERE result_id = 'srv'").fetchall()
    assert sorted(c[1] for c in costs) == list(ASSUMED_RATES)
    for _, rate, cost, b in costs:
        assert cost == pytest.approx(rate * 4 / (600 * 3600) * 1e6)
        assert b == basis("measured", "assumption")


def test_every_view_column_is_commented_and_lineage_agrees(con):
    blank = con.execute("SELECT table_name, column_name FROM duckdb_columns() "
                        "WHERE comment IS NULL AND NOT internal").fetchall()
    assert blank == []
    views = {r[0]: r[1] for r in con.execute(
        "SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert all(views.values()) and "scenario_ratio" in views
    bad = con.execute("SELECT * FROM derived_lineage "
                      "WHERE NOT contains(reported_basis, weakest_input)").fetchall()
    assert bad == [] and con.execute("SELECT count(*) FROM derived_lineage").fetchone()[0] > 0


def add_rule(con, scenario: str, ttft_ms: float, tpot_ms: float, reference_tokens: float) -> None:
    """A rules document with one limit, for model family m."""
    insert_rows(con, "source_snapshot", [{
        "id": "doc", "source": "mlperf_rules", "kind": "rules_document", "label": "rules",
        "url": "u", "fetched_at": datetime(2026, 11, 1, tzinfo=UTC), "sha256": "d" * 64,
        "byte_size": 1, "parser_version": "p", "raw_path": "r"}])
    insert_rows(con, "benchmark_rule", [{
        "id": f"doc:m:{scenario}", "model_family": "m", "category": scenario,
        "scenario": scenario, "ttft_ms": ttft_ms, "tpot_ms": tpot_ms,
        "reference_tokens": reference_tokens, "line_number": 1, "quote": "q",
        "evidence": "benchmark_rule", "source_snapshot_id": "doc"}])


def test_latency_bounds_follow_the_rule_of_the_round(con):
    add_rule(con, "Server", 2000.0, 50.0, 101.0)
    [(floor, streams, answer, b)] = con.execute(
        "SELECT min_tokens_per_s_per_user, max_concurrent_streams, reference_answer_seconds, "
        "basis FROM latency_bound").fetchall()
    assert floor == 1000 / 50 and streams == 600 * 50 / 1000
    assert answer == (2000 + 100 * 50) / 1000
    assert b == basis("measured", "benchmark_rule")


def test_each_latency_formula_a_comment_states_computes_the_served_value(con):
    """latency_bound's figures are described by their formulas; each, read as SQL over the
    view's row, gives the value served. The reference answer has a whole number of tokens: at
    Llama 2 70B's Interactive limits (TTFT 450 ms, TPOT 40 ms) and 294.45 reference tokens
    it takes (450 + 293 x 40) / 1000 = 12.17 s, where the comment's old formula, without the
    round, said 12.188."""
    add_rule(con, "Interactive", 450.0, 40.0, 294.45)
    [(answer,)] = con.execute("SELECT reference_answer_seconds FROM latency_bound").fetchall()
    assert answer == pytest.approx((450 + 293 * 40) / 1000)
    formulas = {"min_tokens_per_s_per_user", "max_concurrent_streams", "reference_answer_seconds"}
    comments = con.execute("SELECT column_name, comment FROM duckdb_columns() WHERE "
                           "table_name = 'latency_bound' AND list_contains(?, column_name)",
                           [sorted(formulas)]).fetchall()
    assert {c for c, _ in comments} == formulas
    for column, comment in comments:
        formula = comment.split(":")[0].replace(" x ", " * ")
        [(stated, served)] = con.execute(
            f"SELECT {formula}, {column} FROM latency_bound").fetchall()  # noqa: S608 - ours
        assert stated == pytest.approx(served), (column, comment)


@pytest.mark.parametrize(("named", "total", "per_node", "counted"), [
    ("x87", 88, 8, False),            # v6.0's MI355X cluster: neither count
    ("x8", 16, 8, True),              # a node's count
    ("x88", 88, None, True),          # the total, whatever a node holds
    ("x87", 88, None, False),         # not the total, and a node's count unknown
    ("x99999999999", 88, 8, False),   # too large to read as a count
    (None, 8, 8, True),               # no count in the name
    ("x8", None, 8, False),           # no total: nothing to divide by
])
def test_per_gpu_divides_only_by_a_count_the_row_does_not_contradict(named, total, per_node,
                                                                     counted):
    import duckdb

    from warehouse.figures.derived import COUNTED

    con = duckdb.connect()
    got = con.execute(
        f"SELECT coalesce({COUNTED}, false) FROM (SELECT ?::VARCHAR AS accelerator_instances, "  # noqa: S608
        "?::INTEGER AS total_accelerators, ?::INTEGER AS accelerators_per_node) r",
        [named, total, per_node]).fetchone()
    assert got == (counted,)
